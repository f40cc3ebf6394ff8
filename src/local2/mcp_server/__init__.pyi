from ._caller import CALLER as CALLER
from ._config_block import HOSTS as HOSTS
from ._config_block import Reach as Reach
from ._config_block import client_config as client_config
from ._config_block import local2_command as local2_command
from ._opening import OpeningAgent as OpeningAgent
from ._over_http import MCP_PATH as MCP_PATH
from ._over_http import PersonGate as PersonGate
from ._over_http import mount_mcp as mount_mcp
from ._server import build_server as build_server
from ._server import serve_stdio as serve_stdio

__all__ = [
    "CALLER",
    "HOSTS",
    "MCP_PATH",
    "OpeningAgent",
    "PersonGate",
    "Reach",
    "build_server",
    "client_config",
    "local2_command",
    "mount_mcp",
    "serve_stdio",
]
