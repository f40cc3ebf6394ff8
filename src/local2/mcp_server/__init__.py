"""LoCAL2 as an MCP server (docs/mcp.md): ``local2 mcp`` (stdio) and ``/mcp`` on ``local2
serve`` (streamable HTTP). Not to be confused with :mod:`local2.tools._mcp`, which uses other
MCP servers as the model's tools. A surface: it talks to the service and the base only."""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
