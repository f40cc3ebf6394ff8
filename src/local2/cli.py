"""``local2``: the command line. Every failure is one readable message and a non-zero exit.

Start-up matters here (``bench/startup.py``): this module imports only typer and rich;
settings, the agent and everything heavy are imported inside the commands that use them.
Started as the program, it first pauses the cyclic garbage collector for the imports
(:mod:`local2.gc_pause`); commands that keep running resume it once they are set up.
"""

from __future__ import annotations

import os
import sys

from local2 import gc_pause

# Started as the program (`local2 ...`, `python -m local2.cli`), not imported by a test.
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "local2":
    gc_pause.pause()  # before the imports below

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from local2 import events
from local2.compare.commands import ModelBOpt, TemperatureBOpt
from local2.compare.commands import options as compare_options

if TYPE_CHECKING:
    from local2.config import Settings

app = typer.Typer(
    name="local2",
    help="LoCAL2: a local research assistant you can see inside.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def id_param(what: str = "session id") -> Callable[[str | None], str | None]:
    """A typer callback checking an id given on the command line against the rule
    (``local2.ids``): session ids, and research run ids, which follow the same rule."""

    def check(value: str | None) -> str | None:
        from local2.ids import session_id_problem

        problem = session_id_problem(value, what) if value is not None else None
        if problem:
            raise typer.BadParameter(problem)
        return value

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
ABANDONED = "[abandoned: the answer above was cut off and is not recorded]"


@app.callback()
def main(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Config directory (default: $LOCAL2_CONFIG)."),
    ] = None,
) -> None:
    from local2.config import SettingsError, load_settings

    try:
        ctx.obj = {"settings": load_settings(config)}
    except SettingsError as exc:
        fail(f"Configuration error: {exc}")


def fail(message: str, fix: str = "", code: int = 1) -> None:
    err.print(f"[bold red]Error:[/] {message}")
    if fix:
        err.print(f"[yellow]Fix:[/] {fix}")
    raise typer.Exit(code)


def settings_of(ctx: typer.Context) -> Settings:
    return ctx.obj["settings"]


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn the errors a person can act on into a message and an exit code."""
    from local2.agent import AwaitingApproval, InvalidQuery, TurnCancelled, UnknownTurn
    from local2.config import SettingsError
    from local2.ids import InvalidId
    from local2.models.errors import ModelError
    from local2.storage import StorageUnavailable

    try:
        yield
    except (ModelError, StorageUnavailable) as exc:
        fail(exc.message, exc.fix)
    except TurnCancelled:
        fail("Stopped before the answer: nothing was recorded.", code=130)
    except (InvalidQuery, AwaitingApproval) as exc:
        fail(str(exc), code=2)
    except InvalidId as exc:
        fail(str(exc), code=2)
    except UnknownTurn as exc:
        fail(str(exc), code=3)
    except SettingsError as exc:
        fail(f"Configuration error: {exc}")


def make_agent(
    ctx: typer.Context,
    backend: str | None = None,
    model: str | None = None,
    warmup: Any = None,
) -> Any:
    """The agent for commands that run the model. The chat model is chosen first, so that
    its warm-up (``local2.warmup``) runs while the graph and memory are still loading; a
    paused ``warmup`` given by the caller holds it until the caller starts it."""
    from local2.models.backend import make_chat_model
    from local2.warmup import Warmup, embedder_task, prompt_prefix_task

    settings = settings_of(ctx)
    chosen = make_chat_model(settings, backend=backend, model=model)
    warmup = warmup or Warmup()
    prefix = prompt_prefix_task(settings, chosen.model, chosen.backend)
    if prefix is not None:
        warmup.add("prompt prefix", prefix)

    from local2.agent import Agent

    agent = Agent(
        settings,
        chat_model=chosen.model,
        backend=chosen.backend,
        model=chosen.name,
        notice=chosen.notice,
        native_tools=chosen.native_tools,
    )
    loading = embedder_task(agent.services.memory)
    if loading is not None:
        warmup.add("embedding model", loading)
    for notice in agent.notices:
        err.print(f"[yellow]Notice:[/] {notice}")
    return agent


def approver(interactive: bool) -> Any:
    """Who approves a tool call that needs the person: them, at this terminal, or nobody."""
    from local2.approval import nobody, terminal_approver

    if not interactive or not sys.stdin.isatty():
        return nobody
    from rich.markup import escape

    # What is shown came from the model and from pages: never read as console markup.
    return terminal_approver(
        lambda prompt: err.input(f"[bold yellow]{escape(prompt)}[/]"),
        lambda line: err.print(line, markup=False, highlight=False),
    )


def _show_item(kind: str, data: Any, state: dict[str, Any]) -> None:
    """Render one stream item for a person at a terminal."""
    from local2.compare.commands import show_item

    if show_item(kind, data, state, out, err):  # two respondents, or a retry
        return
    if kind == "thinking":
        if not state.get("thinking"):
            err.print("[dim]Thinking…[/]")
            state["thinking"] = True
        err.print(f"[dim]{data}[/]", end="")
    elif kind == "token":
        if state.get("thinking") and not state.get("live"):
            err.print()
        out.print(data, end="")
        state["live"] = state.get("live", "") + data
    elif kind == "event":
        subject = data["subject"]
        if subject.startswith("tool.request."):
            state["live"] = ""  # what streamed was a tool call, not the answer
            args = json.dumps(data.get("args"), ensure_ascii=False)
            err.print(f"\n[cyan]⚙ {data['tool']}[/] {args} …")
        elif subject.startswith("tool.result."):
            status = f"[red]{data['error']}[/]" if data.get("error") else "[green]done[/]"
            err.print(f"[cyan]⚙ {data['tool']}[/] {status} ({data.get('duration_s', 0):.2f}s)")
        elif subject in (events.TOOL_APPROVAL_GRANTED, events.TOOL_APPROVAL_DENIED):
            verdict = "approved" if subject == events.TOOL_APPROVAL_GRANTED else "denied"
            who = "" if data.get("by") == "person" else " (no one could be asked)"
            err.print(f"[yellow]⚙ {data['tool']} {verdict}{who}[/]")
        elif subject == events.TOOL_LOOP_LIMIT:
            err.print(f"[yellow]Tool limit of {data['limit']} rounds reached: answering now.[/]")
        elif subject == events.MEMORY_INGEST_FAILED:
            err.print(
                f"[yellow]Memory could not store this turn ({data.get('error')}); will retry.[/]"
            )
    elif kind == "answer":
        state["answered"] = True
        # The streamed text is shown as it comes; print the clean answer when it differs
        # (inline thinking or tool-call markup removed).
        live = state.get("live", "")
        if live.strip() != data["answer"].strip():
            if live:
                out.print()
                err.print("[dim]The answer as recorded (what streamed above was cleaned up):[/]")
            out.print(data["answer"], end="")
        out.print()
    elif kind == "final" and data.get("critique"):
        crit = data["critique"]
        score = crit.get("score")
        grade = f"{score}/5" if score is not None else "no grade"
        err.print(f"[dim]Critic: {grade} — {crit.get('feedback', '')}[/]")


def _abandon(state: dict[str, Any]) -> None:
    """The turn failed or was stopped: mark answer text already printed as not recorded."""
    if state.get("live") and not state.get("answered"):
        out.print()
        out.print(ABANDONED, markup=False)


@app.command()
def ask(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The question.")],
    session: SessionOpt = None,
    as_json: JsonOpt = False,
    model: ModelOpt = None,
    backend: BackendOpt = None,
    model_b: ModelBOpt = None,
    temperature_b: TemperatureBOpt = None,
) -> None:
    """Ask one question and print the answer (or the whole turn payload with --json)."""
    compare = compare_options(model_b, temperature_b)
    with friendly_errors():
        agent = make_agent(ctx, backend, model)
        gc_pause.resume("ask")  # the turn may run for minutes
        if as_json:  # a script reads the output: no one to ask, so waiting calls are denied
            payload = agent.ask(query, session, approve=approver(False), options=compare)
            out.print_json(data=payload) if sys.stdout.isatty() else print(
                json.dumps(payload, ensure_ascii=False, indent=2, default=str)
            )
        else:
            view: dict[str, Any] = {}
            try:
                payload = agent.ask(
                    query,
                    session,
                    lambda k, d: _show_item(k, d, view),
                    approver(True),
                    options=compare,
                )
            except BaseException:  # the model failed, or Ctrl+C: nothing was recorded
                _abandon(view)
                raise
            err.print(f"[dim]session {payload['session_id']} · query {payload['query_id']}[/]")
        agent.close()


@app.command()
def chat(
    ctx: typer.Context,
    session: SessionOpt = None,
    model: ModelOpt = None,
    backend: BackendOpt = None,
    model_b: ModelBOpt = None,
    temperature_b: TemperatureBOpt = None,
) -> None:
    """A conversation at the terminal. /new starts a new session, /exit leaves; Ctrl+C stops
    an answer (nothing is recorded for it).

    With --model-b every question is answered by both models; /prefer a|b|tie picks the
    answer the conversation continues from. After a low grade, /retry tries again.
    """
    import time

    from local2.agent import AwaitingApproval, InvalidQuery, TurnCancelled, new_session_id
    from local2.compare.chat import chat_command
    from local2.models.errors import ModelError

    compare = compare_options(model_b, temperature_b)

    gen = settings_of(ctx).generator
    what = f"{backend or gen.backend} model" + (f" {model}" if model else "")
    err.print(f"[dim]Loading the {what}, memory and tools… (the first start takes longest)[/]")
    started = time.monotonic()
    with friendly_errors():
        agent = make_agent(ctx, backend, model)
    gc_pause.resume("chat")
    err.print(
        f"[dim]Ready in {time.monotonic() - started:.1f} s: {agent.services.model_name} "
        f"({agent.services.backend}).[/]"
    )
    approve = approver(True)
    session_id = session or new_session_id()
    err.print(
        f"[dim]Session {session_id}. /new for a new session, /exit to leave, "
        "Ctrl+C stops an answer.[/]"
    )
    last: dict[str, Any] = {}  # the latest turn's payload, for /prefer and /retry
    while True:
        try:
            line = input("you> ")
        except (EOFError, KeyboardInterrupt):
            err.print()
            break
        if line.strip() in ("/exit", "/quit"):
            break
        if line.strip() == "/new":
            session_id = new_session_id()
            err.print(f"[dim]Session {session_id}.[/]")
            continue
        view: dict[str, Any] = {}
        try:
            if chat_command(
                agent, line, session_id, last, lambda k, d, v=view: _show_item(k, d, v), approve
            ):
                continue
            last.update(
                agent.ask(
                    line,
                    session_id,
                    lambda k, d, v=view: _show_item(k, d, v),
                    approve,
                    options=compare,
                )
            )
        except (InvalidQuery, AwaitingApproval) as exc:
            err.print(f"[red]{exc}[/]")
        except ModelError as exc:
            _abandon(view)
            err.print(f"[bold red]Error:[/] {exc.message}\n[yellow]Fix:[/] {exc.fix}")
        except (KeyboardInterrupt, TurnCancelled):
            _abandon(view)
            err.print("[yellow]Stopped: nothing was recorded for that question.[/]")
    agent.close()


@app.command()
def doctor(
    ctx: typer.Context, as_json: JsonOpt = False, backend: BackendOpt = None, model: ModelOpt = None
) -> None:
    """Check Ollama and its models (tools, thinking, context), the data directory, web search
    and MCP servers."""
    from rich.table import Table

    from local2.doctor import run_checks

    checks = run_checks(settings_of(ctx), backend=backend, model=model)
    if as_json:
        print(json.dumps([c.as_dict() for c in checks], indent=2))
    else:
        table = Table("check", "status", "detail", "fix")
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        for c in checks:
            table.add_row(c.name, f"[{colour[c.status]}]{c.status}[/]", c.detail, c.fix)
        out.print(table)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)


@app.command()
def feedback(
    ctx: typer.Context,
    session_id: SessionArg,
    query_id: Annotated[str, typer.Argument(help="The turn's query id.")],
    rating: Annotated[
        int | None, typer.Option("--rating", "-r", min=1, max=5, help="1 (bad) to 5 (good).")
    ] = None,
    comment: Annotated[str | None, typer.Option("--comment", "-c")] = None,
    prefer: Annotated[
        str | None,
        typer.Option("--prefer", help="For a compared turn: a, b or tie (the arena counts it)."),
    ] = None,
) -> None:
    """Rate a turn, or say which of two compared answers is better.

    A rating is stored on the turn's engram and in the session's state and changes recall
    ranking; a preference continues the conversation from the preferred answer. Memory is
    not opened here: the engram's annotation waits until memory is next opened (a running
    app or API server applies it before its next recall).
    """
    if rating is None and prefer is None:
        fail("Give --rating 1-5, or --prefer a|b|tie for a compared turn.", code=2)
    if prefer is not None and prefer not in ("a", "b", "tie"):
        fail(f"--prefer takes a, b or tie, not {prefer!r}.", code=2)
    with friendly_errors():
        agent = _offline_agent(ctx)  # no Chroma: a rating waits for memory (local2.memory.deferred)
        try:
            if prefer is not None:
                from local2.compare.session import prefer as record_preference

                result = record_preference(agent, session_id, query_id, prefer, comment)
                follows = (
                    f"the conversation continues from {result['continues'].upper()}"
                    if result["continues_history"]
                    else result["note"]
                )
                out.print(f"Recorded preference {prefer} for {query_id}: {follows}.")
            if rating is not None:
                result = agent.feedback(session_id, query_id, rating, comment)
                out.print(_rated(result))
        finally:
            agent.close()


@app.command()
def history(
    ctx: typer.Context,
    session_id: SessionArg,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 30,
    as_json: JsonOpt = False,
) -> None:
    """A session's checkpoints, newest first: id, step, node, time, next, summary.

    Checkpoints of branches the session no longer continues from (the originals of replays)
    are marked with ○, those left by a turn that was stopped, failed or was killed part-way
    with ✕; pass an id to `local2 replay` to re-run from it.
    """
    with friendly_errors():
        agent = _offline_agent(ctx)
        try:
            rows = agent.checkpoints(session_id, limit)
        finally:
            agent.close()
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return
    from datetime import datetime

    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    table.add_column("")
    table.add_column("checkpoint", no_wrap=True)
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("node", overflow="fold", min_width=9)
    table.add_column("time", no_wrap=True)
    table.add_column("next", overflow="fold", min_width=9)
    table.add_column("summary", no_wrap=True, overflow="ellipsis", min_width=16, ratio=1)
    for r in rows:
        table.add_row(
            "●" if r["current"] else "[red]✕[/]" if r.get("abandoned") else "[dim]○[/]",
            r["checkpoint_id"],
            str(r["step"]),
            r["node"],
            datetime.fromisoformat(r["created_at"]).astimezone().strftime("%m-%d %H:%M:%S"),
            ",".join(r["next"]) or "-",
            r["summary"],
        )
    # Piped output is not cut to 80 columns: ids must stay whole to be pasted back.
    (out if out.is_terminal else Console(width=200, highlight=False)).print(table)
    err.print(
        "[dim]● the branch the session continues from · ○ another branch · "
        "✕ left by a turn that never finished (not continued from)[/]"
    )


@app.command()
def replay(
    ctx: typer.Context,
    session_id: SessionArg,
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint id to re-run from.")],
    query: Annotated[str | None, typer.Option("--query", help="Replace the question.")] = None,
    model: ModelOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-run from a checkpoint as a new branch; the original branch stays intact."""
    with friendly_errors():
        agent = make_agent(ctx, backend, model)  # the replay's model: checked before it runs
        gc_pause.resume("replay")
        try:
            payload = agent.replay(session_id, checkpoint, query=query)
        finally:
            agent.close()
    if as_json:
        print(json.dumps(payload, indent=2, default=str))
        return
    from rich.table import Table

    original = payload.get("original") or {}
    table = Table("", "original", "replay")
    table.add_row("question", original.get("query", "(none)"), str(payload.get("query", "")))
    table.add_row("answer", original.get("answer", "(none)"), payload["answer"])
    was = f"{original['model']} ({original.get('backend')})" if original.get("model") else ""
    table.add_row("model", was, f"{payload.get('model')} ({payload.get('backend')})")
    (out if out.is_terminal else Console(width=160, highlight=False)).print(table)
    out.print(f"New branch checkpoints (newest first): {', '.join(payload['branch'])}")
    err.print(
        "[dim]The session now continues from the new branch; the original branch's "
        f"checkpoints are still listed by `local2 history {session_id}`.[/]"
    )


def _rated(result: dict[str, Any]) -> str:
    """What a rating did, said honestly: memory may not have it yet."""
    rating, query_id = result["rating"], result["query_id"]
    if result.get("unchanged"):
        return f"{query_id} is already rated {rating}: nothing new was recorded."
    said = f"Recorded rating {rating} for {query_id}"
    if result.get("previous"):
        said += f" (it replaces {result['previous']})"
    annotated = result.get("engrams_annotated")
    if annotated is None:
        return f"{said}. Memory gives it to the turn's engrams when it is next opened."
    return f"{said} ({annotated} engram(s) annotated)."


def _offline_agent(ctx: typer.Context) -> Any:
    """An agent for reading and rating sessions: no model server, tools, critic or memory
    (a rating's annotation waits for memory: local2.memory.deferred)."""
    from local2.agent import Agent
    from local2.models.scripted import ScriptedChatModel

    return Agent(
        settings_of(ctx),
        chat_model=ScriptedChatModel(),
        tools=[],
        memory=None,
        critic=None,
        backend="none",
    )


def _mount(name: str, factory: Callable[[], typer.Typer]) -> None:
    with suppress(ImportError):  # a feature whose module is not installed
        app.add_typer(factory(), name=name)


def _memory_app() -> typer.Typer:
    from local2.memory.cli import memory_app

    return memory_app


_mount("memory", _memory_app)

# Feature modules add their own commands: each has `register(app: typer.Typer) -> None`.
for _module in (
    "local2.ui.commands",
    "local2.stories.commands",
    "local2.files.commands",
    "local2.compare.commands",
    "local2.research.commands",
):
    with suppress(ImportError):
        __import__(_module, fromlist=["register"]).register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
