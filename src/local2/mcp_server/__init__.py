"""LoCAL2 as an MCP server (docs/mcp.md): ``local2 mcp`` (stdio) and ``/mcp`` on ``local2
serve`` (streamable HTTP). Not to be confused with :mod:`local2.tools.mcp`, which uses other
MCP servers as the model's tools. A surface: it talks to the service and the base only."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.mcp_server.caller import CALLER as CALLER
    from local2.mcp_server.config_block import HOSTS as HOSTS
    from local2.mcp_server.config_block import Reach as Reach
    from local2.mcp_server.config_block import client_config as client_config
    from local2.mcp_server.config_block import local2_command as local2_command
    from local2.mcp_server.opening import OpeningAgent as OpeningAgent
    from local2.mcp_server.over_http import MCP_PATH as MCP_PATH
    from local2.mcp_server.over_http import PersonGate as PersonGate
    from local2.mcp_server.over_http import mount_mcp as mount_mcp
    from local2.mcp_server.server import build_server as build_server
    from local2.mcp_server.server import serve_stdio as serve_stdio
else:
    __getattr__ = lazy_face(__name__, __file__)
