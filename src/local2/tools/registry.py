"""The tools offered to the model: built-in ones enabled in config, plus configured extras."""

from __future__ import annotations

from typing import Any

from local2.config import Settings
from local2.tools.base import Tool


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
    from local2.tools.web import web_tools

    enabled = set(settings.generator.enabled_tools)
    tools: list[Tool] = list(web_tools(settings, backend))
    if "search_library" in enabled:  # opt-in: generator.enabled_tools
        from local2.tools.library_tools import library_tool

        tools.append(library_tool(settings))
    if memory is not None:
        from local2.tools.memory_tools import memory_tools

        tools.extend(memory_tools(memory, settings))
    tools = [t for t in tools if t.name in enabled]
    # As the agent's wiring decides (service/wiring.py: default_folders): the same tools
    # whoever asks, the embedded model's warm-up included.
    if folders is not None or settings.files.roots or settings.documents.own:
        from local2.tools.files import file_tools

        tools.extend(file_tools(settings, folders=folders))
    if mcp and settings.mcp.servers:
        from local2.tools.mcp import load_mcp_tools

        mcp_tools, _statuses = load_mcp_tools(settings)
        tools.extend(mcp_tools)
    return tools
