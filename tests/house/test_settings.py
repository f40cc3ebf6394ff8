"""Settings: defaults, overrides from a config directory and the environment, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from local2.config import load_settings
from local2.errors import SettingsError


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def test_defaults_and_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCAL2_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:11434")
    settings = load_settings()
    assert settings.generator.num_ctx == 32000
    assert settings.generator.max_tool_iterations == 5 and settings.generator.max_turns == 50
    assert settings.data_dir == tmp_path / "h"
    assert settings.system.checkpoint_path == tmp_path / "h" / "checkpoints.sqlite"
    assert settings.ollama_host == "http://gpu-box:11434"
    # the tools' descriptions are declared beside their code: settings list only tuned ones
    assert settings.generator.tools == []


def test_config_directory_overrides_deep_merge(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    write(conf, "generator.yaml", "model: llama3.2:3b\nmax_tool_iterations: 2\n")
    write(conf, "web.yaml", "search:\n  max_results: 3\n")
    settings = load_settings(conf)
    assert settings.generator.model == "llama3.2:3b"
    assert settings.generator.max_tool_iterations == 2
    assert settings.generator.num_ctx == 32000  # untouched default
    assert settings.web.search.max_results == 3
    assert settings.web.fetch.max_chars is None  # untouched: a share of num_ctx
    assert settings.web.fetch.max_bytes == 2_000_000


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("generator.yaml", "model: [unclosed\n", "generator.yaml (line"),
        ("generator.yaml", "modle: x\n", "unknown key 'modle'"),
        ("generator.yaml", "num_ctx: lots\n", "key 'num_ctx'"),
        ("web.yaml", "search:\n  max_results: many\n", "key 'search.max_results'"),
        ("web.yaml", "search:\n  colour: red\n", "unknown key 'search.colour'"),
        ("generator.yaml", "- a\n- b\n", "expected a mapping"),
        ("genrator.yaml", "model: x\n", "unknown config file"),
    ],
)
def test_bad_config_is_one_message_naming_file_and_key(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    conf = tmp_path / "conf"
    path = write(conf, name, text)
    with pytest.raises(SettingsError) as info:
        load_settings(conf)
    message = str(info.value)
    assert str(path) in message
    assert expected in message


def test_missing_config_directory(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(tmp_path / "nowhere")


def test_budget_must_fit_the_context(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    write(conf, "generator.yaml", "num_ctx: 4096\nhistory_token_budget: 8000\n")
    with pytest.raises(SettingsError, match="history_token_budget"):
        load_settings(conf)
