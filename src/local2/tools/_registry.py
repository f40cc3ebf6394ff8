"""The tools offered to the model: built-in ones enabled in config, plus configured extras."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from local2.config import Settings, ToolSchema
from local2.contracts import BUILT_IN, SEARCH_LIBRARY
from local2.tools._base import Tool, declared_tools
from local2.tools._files import file_tools
from local2.tools._library_tools import library_tool
from local2.tools._web import web_tools

ToolMaker = Callable[[Settings], list[Tool]]
_registered: dict[str, ToolMaker] = {}


def register_tools(name: str, make: ToolMaker) -> None:
    """Offer the tools ``make(settings)`` builds (each declared beside its code, built with
    ``configured_tool``) with the built-in ones, each when ``generator.enabled_tools`` names
    it. ``name`` is the registration's, to replace or remove it."""
    _registered[name] = make


def unregister_tools(name: str) -> None:
    _registered.pop(name, None)


def default_tools(
    settings: Settings,
    memory: Any | None,
    backend: str | None = None,
    *,
    mcp: bool = True,
    folders: Any = None,
) -> list[Tool]:
    """``backend`` is the one chosen (``auto`` resolved): it sizes how much page text fits.
    ``mcp=False`` leaves out MCP servers' tools (and starts none). The file tools read
    ``folders`` (:class:`local2.files.Folders`: the configured folders and each person's
    own documents), offered when either is on."""
    enabled = set(settings.generator.enabled_tools)
    tools: list[Tool] = list(web_tools(settings, backend))
    if SEARCH_LIBRARY in enabled:  # opt-in: generator.enabled_tools
        tools.append(library_tool(settings))
    if memory is not None:
        # Memory's tools bring local2.memory and Chroma (about 0.45-0.85 s of imports,
        # python -X importtime), which a run with memory.enabled: false never loads.
        from local2.tools._memory_tools import memory_tools

        tools.extend(memory_tools(memory, settings))
    for made in list(_registered.values()):  # a registered tool: offered when enabled
        tools.extend(made(settings))
    tools = [t for t in tools if t.name in enabled]
    # As the agent's wiring decides (service/wiring.py: default_folders): the same tools
    # whoever asks, the embedded model's warm-up included.
    if folders is not None or settings.files.roots or settings.documents.own:
        tools.extend(file_tools(settings, folders=folders))
    if mcp and settings.mcp.servers:
        # The MCP SDK is about 0.4-1.5 s of imports (python -X importtime): only with servers.
        from local2.tools._mcp import load_mcp_tools

        mcp_tools, _statuses = load_mcp_tools(settings)
        tools.extend(mcp_tools)
    return tools


def built_in_schemas() -> dict[str, ToolSchema]:
    """What the model is told about each built-in tool, as declared beside its code."""
    # The web, library and file tools' declarations are imported above; memory's with
    # Chroma, as default_tools says.
    import local2.tools._memory_tools  # noqa: F401

    return {name: s for name, s in declared_tools().items() if name in BUILT_IN}
