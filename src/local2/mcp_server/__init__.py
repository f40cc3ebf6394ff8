"""LoCAL2 as an MCP server (DESIGN §18): ``local2 mcp`` (stdio) and ``/mcp`` on ``local2
serve`` (streamable HTTP). Not to be confused with :mod:`local2.tools.mcp`, which uses other
MCP servers as the model's tools. A surface: it talks to the service and the base only."""

from local2.faces import lazy_face

_FACE = {
    "build_server": "local2.mcp_server.server",
    "mount_mcp": "local2.mcp_server.server",
    "serve_stdio": "local2.mcp_server.server",
    "client_config": "local2.mcp_server.config_block",
    "CALLER": "local2.mcp_server.caller",
    "PersonGate": "local2.mcp_server.caller",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "CALLER",
    "PersonGate",
    "build_server",
    "client_config",
    "mount_mcp",
    "serve_stdio",
]
