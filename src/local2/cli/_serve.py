"""``local2 ui`` and ``local2 serve``: the web app and the HTTP API on one local server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

import local2.cli._gc_pause as gc_pause
from local2.cli._common import (
    BackendOpt,
    ModelBOpt,  # the app's and the API's default second model
    TemperatureBOpt,
    compare_options,
    err,
    fail,
    make_agent,
    out,
    settings_of,
)
from local2.cli._errors import friendly_errors
from local2.cli._people import configured as people_configured
from local2.ports import is_loopback

if TYPE_CHECKING:
    from local2.contracts import TurnOptions

HostOpt = Annotated[
    str | None,
    typer.Option("--host", help="Address to bind (default: ui.host, 127.0.0.1)."),
]
PortOpt = Annotated[
    int | None,
    typer.Option("--port", min=0, max=65535, help="Port (default: ui.port, 7860; 0 = any free)."),
]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="Ollama model to use.")]


def _run(
    ctx: typer.Context,
    host: str | None,
    port: int | None,
    backend: str | None,
    model: str | None,
    with_ui: bool,
    compare: TurnOptions | None = None,
) -> None:
    # lazy: langgraph, langchain_core, local2.service: ~2.0 s, 1457 modules at local2 --help
    from local2.http import require_token

    settings = settings_of(ctx).ui
    host = host or settings.host
    port = settings.port if port is None else port
    with friendly_errors():
        # Before the app's imports: a refusal should come at once. With people added
        # (local2 users add), each brings their own token: the single one is not needed.
        people = not is_loopback(host) and people_configured(settings_of(ctx))
        require_token(host, people=people)
    # lazy: langgraph, langchain_core, local2.service: ~3.1 s, 1667 modules at local2 --help
    from local2.server import require_allowed_hosts, serve

    with friendly_errors():
        require_allowed_hosts(host, settings_of(ctx).server.allowed_hosts)

    from local2.service import Warmup  # lazy: local2.service: ~6 ms, 5 modules at local2 --help

    # The model's warm-up waits until the app is built: on two cores it would slow the
    # page's start by seconds, and the first question comes later anyway.
    warmup = Warmup(paused=True)
    with friendly_errors():
        agent = make_agent(ctx, backend, model, warmup)
    agent.turns.compare_default = compare.compare if compare else None
    warmup.add("first turn", agent.warm_up)
    warmup.add("grades owed", agent.late_grades.recover)  # a server stopped with some: given now

    def ready(url: str) -> None:
        # Set up and listening: the collector paused for start-up runs again from here on.
        gc_pause.resume("ui" if with_ui else "serve")
        what = "LoCAL2 app and HTTP API" if with_ui else "LoCAL2 HTTP API"
        out.print(f"{what} on {url}/  (API: {url}/health, /query, /docs; Ctrl+C stops)")
        warmup.start()

    try:
        serve(agent, host, port, ui=with_ui, on_ready=ready)
    except OSError as exc:
        fail(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.", "Pick another --port.")
    except KeyboardInterrupt:  # pragma: no cover - interactive
        err.print()
    finally:
        agent.close()


def register(app: typer.Typer) -> None:
    @app.command()
    def ui(
        ctx: typer.Context,
        host: HostOpt = None,
        port: PortOpt = None,
        backend: BackendOpt = None,
        model: ModelOpt = None,
        model_b: ModelBOpt = None,
        temperature_b: TemperatureBOpt = None,
    ) -> None:
        """Open the web app (with the HTTP API on the same server) at http://127.0.0.1:7860."""
        compare = compare_options(model_b, temperature_b)
        _run(ctx, host, port, backend, model, with_ui=True, compare=compare)

    @app.command()
    def serve(
        ctx: typer.Context,
        no_ui: Annotated[bool, typer.Option("--no-ui", help="Serve the HTTP API alone.")] = False,
        host: HostOpt = None,
        port: PortOpt = None,
        backend: BackendOpt = None,
        model: ModelOpt = None,
        model_b: ModelBOpt = None,
        temperature_b: TemperatureBOpt = None,
    ) -> None:
        """Serve the HTTP API (and the web app unless --no-ui) for scripts and other machines."""
        compare = compare_options(model_b, temperature_b)
        _run(ctx, host, port, backend, model, with_ui=not no_ui, compare=compare)
