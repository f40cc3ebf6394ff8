"""``local2 mcp``: LoCAL2 as an MCP server over stdio, for a desktop client (Claude Desktop,
Cursor, VS Code) that starts it; every call is the person's the command runs for (local, or
``--as NAME``). ``--print-config`` prints the blocks to paste into such a client, and into a
client of ``/mcp`` on ``local2 serve`` (streamable HTTP, with a bearer token).

stdout is the protocol's: notices and logs go to stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer

from local2.cli import gc_pause
from local2.cli.common import BackendOpt, make_agent, person_of
from local2.cli.errors import friendly_errors


def register(app: typer.Typer) -> None:
    @app.command()
    def mcp(
        ctx: typer.Context,
        print_config: Annotated[
            bool,
            typer.Option("--print-config", help="Print the client configuration and exit."),
        ] = False,
        url: Annotated[
            str,
            typer.Option("--url", help="The /mcp address for the HTTP block (--print-config)."),
        ] = "http://127.0.0.1:7860/mcp",
        token: Annotated[
            str | None,
            typer.Option(
                "--token",
                help="The bearer token for the HTTP block (default: ${LOCAL2_TOKEN}, "
                "expanded by the client).",
            ),
        ] = None,
        backend: BackendOpt = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="Model to use.")] = None,
    ) -> None:
        """Serve LoCAL2 over MCP on stdin/stdout (for Claude Desktop and other MCP clients)."""
        if print_config:
            from local2.mcp_server import client_config

            root = ctx.find_root().params
            config_dir = root.get("config")
            block = client_config(
                url,
                token,
                config_dir=str(config_dir.resolve()) if config_dir else None,
                as_name=root.get("as_name"),
            )
            typer.echo(block, nl=False)
            return
        from local2.mcp_server import serve_stdio

        with friendly_errors():
            agent = make_agent(ctx, backend, model)
        gc_pause.resume("mcp")
        try:
            serve_stdio(agent, person_of(ctx))
        except KeyboardInterrupt:  # pragma: no cover - interactive
            pass
        finally:
            agent.close()
