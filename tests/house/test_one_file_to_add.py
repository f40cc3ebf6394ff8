"""Adding a search provider or a tool is one file (docs/architecture.md, "Adding a thing"):
a dummy of each, written into a temporary package and imported as its own module, is found
everywhere it must be. The provider: the settings accept its name and its keys (and refuse
a misspelt one), ``auto`` orders it by its rule, the chain builds it from its settings and
searches with it, the doctor checks it. The tool: the model's tool list offers it with the
schema declared beside its code, and the chat turn calls it."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from local2.config import load_settings, provider_names
from local2.config._schema import WebSearchSettings
from local2.errors import SettingsError
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2.service.doctor import _search_check
from local2.tools import provider_specs, unregister_provider, unregister_tools
from local2.tools._registry import default_tools
from local2.tools._search import auto_reasons, make_chain
from tests.kit.helpers import make_settings

ROOT = Path(__file__).resolve().parents[2]

PROVIDER = '''
"""A dummy provider: its settings, its class, its rules, registered. One file."""
from collections.abc import Mapping
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.tools import Precheck, ProviderSpec, register_provider
from local2.tools._search import SearchHit


class EchoSettings(ProviderSettings):
    echo_prefix: str = "echo"
    echo_hits: int = 2


class EchoProvider:
    name = "echo"

    def __init__(self, prefix: str, hits: int) -> None:
        self.prefix, self.hits = prefix, hits

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        return [
            SearchHit(f"{self.prefix} {i}: {query}", f"https://echo.test/{i}", query)
            for i in range(min(self.hits, max_results))
        ]


def make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> EchoProvider:
    own = cfg.of(EchoSettings)
    return EchoProvider(own.echo_prefix, own.echo_hits)


def why(cfg: WebSearchSettings, env: Mapping[str, str], probe: Any) -> str | None:
    return "ECHO_ON is set" if env.get("ECHO_ON") else None


def check(cfg: WebSearchSettings, named: bool) -> Precheck | None:
    return Precheck("warn", "echo only says the query back", "name a real provider")


register_provider(
    ProviderSpec(
        "echo", EchoSettings, make, auto=why, rank=5, key_env="ECHO_KEY",
        key_required=True, precheck=check,
    )
)
'''

TOOL = '''
"""A dummy tool: its body, its declaration (name, description, schema), registered. One file."""
from collections.abc import Mapping
from typing import Any

from local2.config import Settings, ToolSchema
from local2.tools import Tool, configured_tool, declare, register_tools

SHOUT_TOOL = declare(
    ToolSchema(
        name="shout",
        description="Say the text back in capitals.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to shout"}},
            "required": ["text"],
        },
    )
)


def shout(args: Mapping[str, Any], ctx: Any = None) -> str:
    return str(args.get("text", "")).upper()


def tools(settings: Settings) -> list[Tool]:
    return [configured_tool(settings, SHOUT_TOOL, shout, effects="read", output="own")]


register_tools("shout", tools)
'''


def as_function(tool: object) -> dict:
    return tool if isinstance(tool, dict) and "function" in tool else convert_to_openai_tool(tool)


def one_file(tmp_path: Path, name: str, code: str) -> ModuleType:
    """``code`` as the module ``name`` of a package of its own, imported."""
    package = tmp_path / "addons"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / f"{name}.py").write_text(textwrap.dedent(code))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(f"addons.{name}")
    finally:
        sys.path.remove(str(tmp_path))


@pytest.fixture
def addons(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    unregister_provider("echo")
    unregister_tools("shout")
    for name in [m for m in sys.modules if m == "addons" or m.startswith("addons.")]:
        del sys.modules[name]


def test_a_provider_in_one_file_is_found_everywhere(
    addons: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SettingsError, match="unknown search provider 'echo': one of auto, "):
        make_settings(addons, web={"search": {"provider": "echo"}})
    one_file(addons, "echo", PROVIDER)

    # the settings: its name, its keys typed, a misspelt key refused, its defaults
    assert "echo" in provider_names()
    settings = make_settings(
        addons, web={"search": {"provider": "echo", "echo_prefix": "hi", "echo_hits": "3"}}
    )
    cfg = settings.web.search
    extra = cfg.model_extra or {}
    assert cfg.provider == "echo" and (extra["echo_prefix"], extra["echo_hits"]) == ("hi", 3)
    conf = addons / "conf"
    conf.mkdir()
    (conf / "web.yaml").write_text("search:\n  provider: echo\n  echo_prefx: hi\n")
    with pytest.raises(SettingsError, match=r"web\.yaml: unknown key 'search\.echo_prefx'"):
        load_settings(conf)
    (conf / "web.yaml").write_text("search:\n  provider: echo\n  echo_hits: many\n")
    with pytest.raises(SettingsError, match=r"key 'search\.echo_hits': .*search provider echo"):
        load_settings(conf)
    echo = sys.modules["addons.echo"]
    assert WebSearchSettings(provider="echo").of(echo.EchoSettings).echo_hits == 2  # default

    # the chain: built from its settings, it answers
    found = make_chain(cfg).search("tides", 5)
    assert found.provider == "echo"
    assert [h.title for h in found.hits] == ["hi 0: tides", "hi 1: tides", "hi 2: tides"]

    # auto: tried first (rank 5) while its rule holds, absent when it does not
    plain = WebSearchSettings()
    on = auto_reasons(plain, {"ECHO_ON": "1"}, probe=lambda url: False)
    assert on[0] == ("echo", "ECHO_ON is set") and on[-1][0] == "ddgs"
    assert "echo" not in dict(auto_reasons(plain, {}, probe=lambda url: False))
    assert next(s.name for s in provider_specs()) == "echo"

    # the doctor: its key required when named, then its own check
    monkeypatch.delenv("ECHO_KEY", raising=False)
    check = _search_check(settings)
    assert (check.status, check.detail, check.fix) == (
        "fail",
        "provider echo needs ECHO_KEY",
        "export ECHO_KEY=...",
    )
    monkeypatch.setenv("ECHO_KEY", "k")
    check = _search_check(settings)
    assert (check.status, check.detail) == ("warn", "echo only says the query back")


def test_a_tool_in_one_file_is_offered_to_the_model_with_its_schema(addons: Path) -> None:
    one_file(addons, "shout", TOOL)
    settings = make_settings(addons, generator={"enabled_tools": ["web_search", "shout"]})
    offered = {t.name: t for t in default_tools(settings, None, mcp=False)}
    assert {"web_search", "shout"} <= set(offered)
    assert offered["shout"].description == "Say the text back in capitals."
    assert offered["shout"].parameters["required"] == ["text"]
    off = make_settings(addons)  # not enabled: not offered
    assert "shout" not in {t.name for t in default_tools(off, None, mcp=False)}

    # the chat turn binds it with its schema, and runs it when the model calls it
    model = ScriptedChatModel(
        replies=[
            AIMessage("", tool_calls=[{"name": "shout", "args": {"text": "hi"}, "id": "c1"}]),
            AIMessage("It said HI."),
        ]
    )
    agent = Agent(
        settings, chat_model=model, tools=list(offered.values()), memory=None, critic=None
    )
    try:
        payload = agent.turns.ask("shout hi", "s-shout")
    finally:
        agent.close()
    bound = {t["function"]["name"]: t["function"] for t in map(as_function, model.bound_tools[-1])}
    assert bound["shout"]["description"] == "Say the text back in capitals."
    assert bound["shout"]["parameters"]["properties"]["text"]["type"] == "string"
    calls = payload["tool_calls"]
    assert [(c["tool"], c["result"]) for c in calls] == [("shout", "HI")]


def test_web_yaml_documents_and_ships_every_registered_provider() -> None:
    """web.yaml is the settings' documentation: its comment names every provider the
    registry has, and it ships every provider's key with its declared default."""
    text = (ROOT / "src" / "local2" / "config" / "web.yaml").read_text(encoding="utf-8")
    search = yaml.safe_load(text)["search"]
    names = [s.name for s in provider_specs()]
    comment = " ".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    assert [n for n in names if n not in comment] == []
    for key, field in WebSearchSettings.provider_fields().items():
        assert key in search, f"web.yaml ships no {key}"
        assert search[key] == field.default, key
