"""What the model is told about each built-in tool is written once, beside its code."""

from __future__ import annotations

from pathlib import Path

from local2.config import load_settings
from local2.memory._store import EngramStore
from local2.tools._files import TOOL_NAMES as FILE_TOOLS
from local2.tools._registry import built_in_schemas, default_tools
from tests.kit.helpers import make_settings

SRC = Path(__file__).resolve().parents[2] / "src" / "local2"
WEB_AND_MEMORY = ["web_search", "web_fetch", "recall_memory", "save_memory"]
BUILT_IN = {*WEB_AND_MEMORY, "search_library", *FILE_TOOLS}  # search_library: opt-in


def built(tmp_path: Path, config_dir: Path | None = None) -> dict:
    """Every built-in tool: web, memory (a real store) and files (a notes folder)."""
    (tmp_path / "notes").mkdir(exist_ok=True)
    settings = load_settings(
        config_dir,
        overrides={
            "system": {"data_dir": str(tmp_path / "data")},
            "memory": {"embedder": "lexical"},
            "files": {"roots": [str(tmp_path / "notes")]},
            "generator": {"enabled_tools": [*WEB_AND_MEMORY, "search_library"]},
        },
    )
    return {t.name: t for t in default_tools(settings, EngramStore.open(settings))}


def test_every_built_in_tool_is_described_by_its_declaration(tmp_path: Path) -> None:
    shipped = built_in_schemas()
    assert set(shipped) == BUILT_IN
    tools = built(tmp_path)
    assert set(tools) == BUILT_IN
    for name, tool in tools.items():
        assert (tool.description, tool.parameters) == (
            shipped[name].description,
            shipped[name].parameters,
        ), name


def test_each_description_is_written_once_in_its_tools_module() -> None:
    """Beside the code that builds the tool, and nowhere else: not in the shipped
    generator.yaml (which lists none), not copied into another module."""
    shipped = (SRC / "config" / "generator.yaml").read_text(encoding="utf-8")
    modules = {p: p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")}
    for name, schema in built_in_schemas().items():
        head = schema.description[:40]
        assert head not in shipped, f"{name}'s description is in generator.yaml"
        written = [p.name for p, code in modules.items() if head in code]
        assert len(written) == 1, f"{name}'s description is written in {written}"


def test_a_tuned_description_replaces_only_its_own_tool(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "generator.yaml").write_text(
        "tools:\n"
        "  - name: web_search\n"
        "    description: Search the web for recent facts only.\n"
        "    parameters: {type: object, properties: {query: {type: string}}, required: [query]}\n"
    )
    tools = built(tmp_path, conf)
    assert tools["web_search"].description == "Search the web for recent facts only."
    shipped = built_in_schemas()
    assert tools["web_fetch"].description == shipped["web_fetch"].description
    assert tools["recall_memory"].parameters == shipped["recall_memory"].parameters
    # the settings hold only what was tuned: the rest is as declared beside its code
    assert [t.name for t in load_settings(conf).generator.tools] == ["web_search"]
    assert make_settings(tmp_path).generator.tool_schema("web_fetch") is None
