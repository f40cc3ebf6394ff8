"""Load settings: shipped defaults, then a config directory, then the environment.

Each section comes from ``<section>.yaml``; a file in the config directory (``--config DIR``
or ``LOCAL2_CONFIG``) is deep-merged over the shipped default of the same name. Any problem
is one :class:`SettingsError` naming the file and the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from local2.config._schema import SECTIONS, Settings
from local2.errors import SettingsError

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
POSTGRES_URL_ENV = "LOCAL2_POSTGRES_URL"


def _read_yaml(text: str, origin: str) -> dict[str, Any]:  # a YAML file's mapping, unchecked
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SettingsError(f"{origin}{where}: malformed YAML: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(f"{origin}: expected a mapping of keys, got {type(data).__name__}")
    return data


# settings as YAML or a model_dump gives them (JSON), before the schema checks the merge
def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` merged in, mappings recursively (neither is modified)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# data: a section as its YAML files give it, before the schema checks it
def _validate_section(name: str, data: dict[str, Any], origin: dict[str, str]) -> Any:
    field = Settings.model_fields[name]
    model_type = field.annotation
    try:
        return model_type.model_validate(data)  # type: ignore[union-attr]  # every Settings section is a model
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or name
        top = str(err["loc"][0]) if err["loc"] else ""
        file = origin.get(top, origin.get("", f"{name}.yaml"))
        if err["type"] in ("unknown_key", "provider_key"):  # a search provider's (schema.py)
            key = f"{key}.{err['ctx']['key']}"
        if err["type"] in ("extra_forbidden", "unknown_key"):
            raise SettingsError(f"{file}: unknown key '{key}'") from None
        raise SettingsError(f"{file}: key '{key}': {err['msg']}") from None


def config_dir_from_env(config_dir: str | Path | None) -> Path | None:
    chosen = config_dir or os.environ.get("LOCAL2_CONFIG")
    if not chosen:
        return None
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise SettingsError(f"{path}: config directory does not exist")
    return path


def load_settings(
    config_dir: str | Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build :class:`Settings` from the shipped defaults, a config directory and overrides.

    ``overrides`` is a mapping ``{section: {key: value}}`` applied last (tests, notebooks).
    """
    user_dir = config_dir_from_env(config_dir)
    defaults = resources.files("local2.config")
    known = {f"{s}.yaml" for s in SECTIONS}
    if user_dir is not None:
        for stray in sorted(p.name for p in user_dir.glob("*.y*ml")):
            if stray not in known:
                raise SettingsError(
                    f"{user_dir / stray}: unknown config file (expected one of: "
                    f"{', '.join(sorted(known))})"
                )
    sections: dict[str, Any] = {}  # each section's YAML, merged, before the schema checks it
    for name in SECTIONS:
        filename = f"{name}.yaml"
        shipped = defaults / filename
        data: dict[str, Any] = {}  # the section's YAML, merged from its files
        origin: dict[str, str] = {"": f"{filename} (shipped default)"}
        if shipped.is_file():
            data = _read_yaml(shipped.read_text(encoding="utf-8"), origin[""])
            origin.update({k: origin[""] for k in data})
        if user_dir is not None and (user_dir / filename).is_file():
            user_file = user_dir / filename
            user_data = _read_yaml(user_file.read_text(encoding="utf-8"), str(user_file))
            data = deep_merge(data, user_data)
            origin.update({k: str(user_file) for k in user_data})
            origin[""] = str(user_file)
        if overrides and name in overrides:
            data = deep_merge(data, overrides[name])
            origin.update({k: "overrides" for k in overrides[name]})
        sections[name] = _validate_section(name, data, origin)
    unknown = set(overrides or {}) - set(SECTIONS)
    if unknown:
        raise SettingsError(f"overrides: unknown section(s) {sorted(unknown)}")
    settings = Settings(**sections)
    _resolve_environment(settings)
    return settings


def _resolve_environment(settings: Settings) -> None:
    system = settings.system
    if system.data_dir is None:
        home = os.environ.get("LOCAL2_HOME")
        system.data_dir = Path(home).expanduser() if home else Path.home() / ".local2"
    system.data_dir = Path(system.data_dir).expanduser()
    if system.checkpoint_path is None:
        system.checkpoint_path = system.data_dir / "checkpoints.sqlite"
    if system.postgres_url is None:
        system.postgres_url = os.environ.get(POSTGRES_URL_ENV) or None
    if system.checkpointer == "postgres" and not system.postgres_url:
        raise SettingsError(
            f"system.yaml: checkpointer: postgres needs a database: set {POSTGRES_URL_ENV} "
            "(or system.postgres_url), e.g. postgresql://local2@db-host:5432/local2"
        )
    env_host = os.environ.get("OLLAMA_HOST")
    if system.ollama_host is None:
        system.ollama_host = env_host or DEFAULT_OLLAMA_HOST
    if not system.ollama_host.startswith(("http://", "https://")):
        system.ollama_host = f"http://{system.ollama_host}"
