from .caller import CALLER as CALLER
from .config_block import HOSTS as HOSTS
from .config_block import Reach as Reach
from .config_block import client_config as client_config
from .config_block import local2_command as local2_command
from .opening import OpeningAgent as OpeningAgent
from .over_http import MCP_PATH as MCP_PATH
from .over_http import PersonGate as PersonGate
from .over_http import mount_mcp as mount_mcp
from .server import build_server as build_server
from .server import serve_stdio as serve_stdio

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
