"""The one server (``local2 ui``, ``local2 serve``): the Gradio app, the HTTP API and
``/mcp`` on one port, behind the Host/Origin guard and the page policy.

A host, not a surface: it sits above the surfaces it puts together (the app, ``local2.ui``;
the API, ``local2.http``; the MCP server, ``local2.mcp_server``), which are independent of
one another (docs/architecture.md, pyproject.toml's contracts).
"""

from local2.server._app import bind, create_app, require_allowed_hosts, serve, url_of

__all__ = [
    "bind",
    "create_app",
    "require_allowed_hosts",
    "serve",
    "url_of",
]
