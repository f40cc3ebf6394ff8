"""The tools offered to the model: built-in ones enabled in config, plus configured extras."""

from __future__ import annotations

from typing import Any

from local2.config import Settings
from local2.tools.base import Tool


def default_tools(settings: Settings, memory: Any | None, backend: str | None = None) -> list[Tool]:
    """``backend`` is the one chosen (``auto`` resolved): it sizes how much page text fits."""
    from local2.tools.web import web_tools

    enabled = set(settings.generator.enabled_tools)
    tools: list[Tool] = list(web_tools(settings, backend))
    if memory is not None:
        from local2.tools.memory_tools import memory_tools

        tools.extend(memory_tools(memory, settings))
    tools = [t for t in tools if t.name in enabled]
    if settings.files.roots:
        from local2.tools.files import file_tools

        tools.extend(file_tools(settings))
    if settings.mcp.servers:
        from local2.tools.mcp import load_mcp_tools

        mcp_tools, _statuses = load_mcp_tools(settings)
        tools.extend(mcp_tools)
    return tools
