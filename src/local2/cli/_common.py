"""What every command shares: the two consoles, the options, and how an agent is made.

Start-up matters (``bench/startup.py``): this module imports only typer and rich; settings,
the agent and everything heavy are imported inside the functions that need them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from local2.contracts import LOCAL, Person
from local2.errors import InvalidId, InvalidInput

if TYPE_CHECKING:
    from local2.config import Settings
    from local2.contracts import TurnOptions
    from local2.service import Agent, ModelParts, Warmup

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, fix: str = "", code: int = 1) -> NoReturn:
    """Print the error (and what to do about it) on stderr and exit with ``code``."""
    err.print(f"[bold red]Error:[/] {message}")
    if fix:
        err.print(f"[yellow]Fix:[/] {fix}")
    raise typer.Exit(code)


def settings_of(ctx: typer.Context) -> Settings:
    """The settings the ``local2`` callback loaded (or the defaults, for a command group run
    on its own)."""
    # lazy: pydantic, yaml, local2.config: ~106 ms, 68 modules at local2 --help
    from local2.config import Settings, load_settings

    found = (ctx.obj if isinstance(ctx.obj, dict) else {}).get("settings")
    return found if isinstance(found, Settings) else load_settings()


def config_dir_of(ctx: typer.Context) -> Path | None:
    """The config directory the settings came from (``--config`` or ``$LOCAL2_CONFIG``)."""
    found = (ctx.find_root().obj or {}).get("config_dir")
    return found if isinstance(found, Path) else None


def person_of(ctx: typer.Context) -> Person:
    """Who this command acts for: local, or the person named by ``--as``."""
    root = ctx.find_root()
    found = (root.obj or {}).get("person")
    return found if isinstance(found, Person) else LOCAL


def id_param(what: str = "session id") -> Callable[[str | None], str | None]:
    """A typer callback checking an id given on the command line against the rule
    (``local2.ids``: session ids, and research run ids, which follow the same rule) before
    anything is opened. It is the request's one check: the id goes on as a ``CheckedId``,
    which the service does not check again."""

    def check(value: str | None) -> str | None:
        # lazy: local2.ids: ~1 ms, 1 module at local2 --help
        from local2.ids import check_session_id

        try:
            return check_session_id(value, what) if value is not None else None
        except InvalidId as exc:
            raise typer.BadParameter(exc.message) from None

    return check


session_param = id_param()

BackendOpt = Annotated[
    str | None,
    typer.Option("--backend", help="ollama | openai | embedded | auto (default: from config)."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", "-m", help="Ollama model, e.g. gemma4:12b (default: from config)."),
]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        "-s",
        help="Session id to continue (default: a new one).",
        callback=session_param,
    ),
]
SessionArg = Annotated[str, typer.Argument(help="The session.", callback=session_param)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ModelBOpt = Annotated[
    str | None,
    typer.Option(
        "--model-b",
        help="A second model answers too; the judge compares them (ui/serve: "
        "the app's and the API's default).",
    ),
]
TemperatureBOpt = Annotated[
    float | None,
    typer.Option("--temperature-b", min=0.0, max=2.0, help="The second respondent's temperature."),
]


def compare_options(model_b: str | None, temperature_b: float | None) -> TurnOptions:
    """The turn options for a second respondent; a bad value stops with a clear message."""
    # lazy: langgraph, langchain_core, local2.tools: ~2.1 s, 1096 modules at local2 --help
    from local2.service import turn_options

    try:
        return turn_options(model_b, temperature_b)
    except InvalidInput as exc:
        fail(exc.message, code=2)


def make_agent(
    ctx: typer.Context,
    backend: str | None = None,
    model: str | None = None,
    warmup: Warmup | None = None,
) -> Agent:
    """The agent for commands that run the model (:func:`local2.service.warming_agent`:
    its warm-up runs while the graph and memory load; a paused ``warmup`` given by the
    caller holds it until the caller starts it); its notices said on stderr."""
    # lazy: pydantic, local2.config: ~300 ms, 51 modules at local2 --help
    from local2.service import warming_agent

    agent = warming_agent(settings_of(ctx), backend, model, warmup)
    for notice in agent.notices:
        err.print(f"[yellow]Notice:[/] {notice}")
    return agent


def offline_parts() -> ModelParts:
    """For reading sessions and runs: no model server, tools, critic or memory."""
    # lazy: pydantic, local2.config: ~141 ms, 51 modules at local2 --help
    from local2.service import offline_parts as parts

    return parts()


def offline_agent(ctx: typer.Context) -> Agent:
    """An agent for reading and rating sessions (a rating's annotation waits for memory:
    local2.memory.deferred)."""
    # lazy: pydantic, local2.config: ~260 ms, 51 modules at local2 --help
    from local2.service import offline_agent as reader

    return reader(settings_of(ctx))


def approver(interactive: bool) -> Any:
    """Who approves a tool call that needs the person: them, at this terminal, or nobody."""
    # lazy: local2.contracts: ~5 ms, 3 modules at local2 --help
    from local2.contracts import nobody, terminal_approver

    if not interactive or not sys.stdin.isatty():
        return nobody

    # What is shown came from the model and from pages: never read as console markup.
    return terminal_approver(
        lambda prompt: err.input(f"[bold yellow]{escape(prompt)}[/]"),
        lambda line: err.print(line, markup=False, highlight=False),
    )
