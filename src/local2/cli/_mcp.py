"""``local2 mcp``: LoCAL2 as an MCP server over stdio, for a desktop client (Claude Desktop,
Cursor, VS Code) that starts it; every call is the person's the command runs for (local, or
``--as NAME``). ``--print-config`` prints, for each host (or the one ``--host`` names), the
block to paste into its file: ``local2 mcp`` with the person's data directory, config and
model host, and ``/mcp`` on ``local2 serve`` (streamable HTTP, with a bearer token).

The server answers from its start (the tools, prompts and templates listed) while the agent
opens beside it; a call waits for the agent. stdout is the protocol's: notices and logs go
to stderr.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import local2.cli._gc_pause as gc_pause
from local2.cli._common import BackendOpt, fail, make_agent, person_of
from local2.cli._errors import report
from local2.errors import Local2Error

if TYPE_CHECKING:
    from local2.config import Settings
    from local2.mcp_server import Reach
    from local2.service import Agent


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
        host: Annotated[
            str | None,
            typer.Option(
                "--host",
                help="Only this host's block (--print-config): claude-desktop, claude-code, "
                "cursor or vscode.",
            ),
        ] = None,
        backend: BackendOpt = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="Model to use.")] = None,
    ) -> None:
        """Serve LoCAL2 over MCP on stdin/stdout (for Claude Desktop and other MCP clients)."""
        if print_config:
            # lazy: local2.mcp_server: ~8 ms, 2 modules at local2 --help
            from local2.mcp_server import HOSTS, client_config

            hosts = tuple(h for h in HOSTS if h == host) if host else HOSTS
            if not hosts:
                fail(f"no host {host!r}", f"use --host with one of: {', '.join(HOSTS)}", code=2)
            reach = reach_of(ctx.obj["settings"], ctx.find_root().params, url, token)
            typer.echo(client_config(reach, hosts), nl=False)
            return
        # lazy: uvicorn, mcp, local2.mcp_server: ~665 ms, 486 modules at local2 --help
        from local2.mcp_server import OpeningAgent, serve_stdio

        opening = OpeningAgent(ctx.obj["settings"], lambda: opened_agent(ctx, backend, model))
        try:
            serve_stdio(opening, person_of(ctx))
        except KeyboardInterrupt:  # pragma: no cover - interactive
            pass
        finally:
            opening.close()


def opened_agent(ctx: typer.Context, backend: str | None, model: str | None) -> Agent:
    """The agent ``local2 mcp`` serves, opened beside the server that already answers: what
    keeps it from opening is said on stderr, as the command says it, and refuses each call
    that needs it (:class:`~local2.mcp_server.OpeningAgent`)."""
    try:
        agent = make_agent(ctx, backend, model)
    except Local2Error as exc:
        report(exc)
        raise
    gc_pause.resume("mcp")
    return agent


# root: the command line's top-level options, as Click parsed them
def reach_of(settings: Settings, root: dict[str, Any], url: str, token: str | None) -> Reach:
    """How a host reaches this person's LoCAL2: ``local2 [--as NAME] mcp`` with their data
    directory, config directory and model host in its environment."""
    # lazy: local2.mcp_server: ~3 ms, 2 modules at local2 --help
    from local2.mcp_server import Reach, local2_command

    config_dir = root.get("config") or os.environ.get("LOCAL2_CONFIG")
    env = {"LOCAL2_HOME": str(Path(settings.system.data_dir or "").expanduser().absolute())}
    if config_dir:
        env["LOCAL2_CONFIG"] = str(Path(config_dir).expanduser().resolve())
    if settings.system.ollama_host:
        env["OLLAMA_HOST"] = settings.system.ollama_host
    as_name = root.get("as_name")
    args = (*(("--as", as_name) if as_name else ()), "mcp")
    return Reach(local2_command(), args, env, url, token)
