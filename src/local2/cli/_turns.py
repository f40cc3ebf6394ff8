"""``local2 ask`` and ``local2 chat``: a question at a time, or a conversation, at a terminal."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import local2.cli._gc_pause as gc_pause
from local2.cli._chat_grades import PROMPT, ChatGrades
from local2.cli._common import (
    BackendOpt,
    JsonOpt,
    ModelBOpt,
    ModelOpt,
    SessionOpt,
    TemperatureBOpt,
    approver,
    compare_options,
    err,
    make_agent,
    out,
    person_of,
    settings_of,
)
from local2.cli._documents import add_files
from local2.cli._errors import friendly_errors, report
from local2.cli._render import abandon, hold_back, show_item
from local2.contracts import LOCAL, Person
from local2.errors import Local2Error, TurnCancelled

if TYPE_CHECKING:
    from local2.contracts import TurnOptions, TurnPayload
    from local2.service import Agent, BackgroundTurn

# How long the chat's end waits for the grades still to come (the last answer's critic).
FINISH_WAIT_S = 120.0

CHAT_HELP = "/prefer a|b|tie after a compared answer · /retry after a low grade · /show 1|2"


def ask(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The question.")],
    session: SessionOpt = None,
    as_json: JsonOpt = False,
    model: ModelOpt = None,
    backend: BackendOpt = None,
    model_b: ModelBOpt = None,
    temperature_b: TemperatureBOpt = None,
    attach: Annotated[
        list[Path] | None,
        typer.Option(
            "--attach",
            help="A document to ask about (PDF, DOCX, ...): added to your documents and "
            "attached to the session, so each question of it searches the document.",
        ),
    ] = None,
) -> None:
    """Ask one question and print the answer (or the whole turn payload with --json)."""
    compare = compare_options(model_b, temperature_b)
    person = person_of(ctx)
    with friendly_errors():
        agent = make_agent(ctx, backend, model)
        gc_pause.resume("ask")  # the turn may run for minutes
        if attach:
            # lazy: local2.ids: ~1 ms, 1 module at local2 --help
            from local2.ids import new_session_id

            session = session or new_session_id()
            add_files(agent.documents, person, attach, session)
        if as_json:  # a script reads the output: no one to ask, so waiting calls are denied
            payload = agent.turns.ask(
                query, session, approve=approver(False), options=compare, person=person
            )
            out.print_json(data=payload) if sys.stdout.isatty() else print(
                json.dumps(payload, ensure_ascii=False, indent=2, default=str)
            )
        else:
            view = hold_back(agent.info.native_tools)
            try:
                payload = agent.turns.ask(
                    query,
                    session,
                    lambda k, d: show_item(k, d, view),
                    approver(True),
                    options=compare,
                    person=person,
                )
            except BaseException:  # the model failed, or Ctrl+C: nothing was recorded
                abandon(view)
                raise
            err.print(f"[dim]session {payload['session_id']} · query {payload['query_id']}[/]")
        agent.close()


@dataclass
class LastTurn:
    """The chat's latest turn, for /prefer, /retry and /show (None before the first)."""

    payload: TurnPayload | None = None

    @property
    def query_id(self) -> str | None:
        return self.payload.get("query_id") if self.payload else None


def chat_command(
    agent: Any,
    line: str,
    session_id: str,
    last: LastTurn,
    on_item: Callable[[str, Any], None],
    approve: Any = None,
    person: Person = LOCAL,
) -> bool:
    """Handle ``line`` if it is /prefer, /retry or /show (about the ``last`` turn, in
    ``person``'s session); True if so."""

    words = line.strip().split()
    if not words or words[0] not in ("/prefer", "/retry", "/show"):
        return False
    query_id = last.query_id
    if not query_id:
        err.print("[yellow]Ask something first.[/]")
        return True
    try:
        agent.access.write_session(person, session_id)
        if words[0] == "/prefer":
            choice = words[1] if len(words) > 1 else ""
            result = agent.ratings.prefer(session_id, query_id, choice)
            err.print(
                f"[dim]Noted: {choice}. The conversation continues from "
                f"{(result['continues'] or 'the answer shown').upper()}.[/]"
            )
        elif words[0] == "/show":
            attempt = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
            agent.retries.show(session_id, query_id, attempt)
            err.print(f"[dim]The conversation continues from attempt {attempt}.[/]")
        else:
            for kind, data in agent.retries.retry(session_id, query_id, approve, person=person):
                on_item(kind, data)
                if kind == "final":
                    last.payload = data
    except Local2Error as exc:
        report(exc)
        err.print(f"[dim]({CHAT_HELP})[/]")
    return True


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
    from local2.ids import new_session_id  # lazy: local2.ids: ~1 ms, 1 module at local2 --help

    compare = compare_options(model_b, temperature_b)
    person = person_of(ctx)
    agent = load_chat_agent(ctx, backend, model)
    approve = approver(True)
    session_id = session or new_session_id()
    err.print(
        f"[dim]Session {session_id}. /new for a new session, /exit to leave, "
        "Ctrl+C stops an answer.[/]"
    )
    last = LastTurn()
    grades = ChatGrades(agent, lambda payload: show_item("final", payload, {}))
    while True:
        grades.prompting()
        try:
            line = input(PROMPT)
        except (EOFError, KeyboardInterrupt):
            err.print()
            break
        grades.answering()
        if line.strip() in ("/exit", "/quit"):
            break
        if line.strip() == "/new":
            session_id = new_session_id()
            err.print(f"[dim]Session {session_id}.[/]")
            continue
        chat_line(agent, line, session_id, last, grades, compare, approve, person)
    grades.finish(FINISH_WAIT_S)
    agent.close()


def load_chat_agent(ctx: typer.Context, backend: str | None, model: str | None) -> Agent:
    """Make the chat's agent, saying what loads and how long it took (the first start is
    slow: the person should know it is working)."""

    gen = settings_of(ctx).generator
    what = f"{backend or gen.backend} model" + (f" {model}" if model else "")
    err.print(f"[dim]Loading the {what}, memory and tools… (the first start takes longest)[/]")
    started = time.monotonic()
    with friendly_errors():
        agent = make_agent(ctx, backend, model)
    gc_pause.resume("chat")
    err.print(
        f"[dim]Ready in {time.monotonic() - started:.1f} s: {agent.info.model} "
        f"({agent.info.backend}).[/]"
    )
    return agent


def chat_line(
    agent: Agent,
    line: str,
    session_id: str,
    last: LastTurn,
    grades: ChatGrades,
    compare: TurnOptions,
    approve: Any,
    person: Person,
) -> None:
    """One line of the chat: a command, or a question answered in ``session_id``. A failure
    or Ctrl+C is reported and the chat goes on (the question is kept)."""
    view = hold_back(agent.info.native_tools)
    try:
        if chat_command(
            agent,
            line,
            session_id,
            last,
            partial(show_item, state=view),
            approve,
            person,
        ):
            return
        turn = agent.turns.start(
            line, session_id, compare, wait=True, person=person, approve=approve
        )
        answered, ended = until_answer(turn, partial(show_item, state=view))
        last.payload = answered
        grades.last_query_id = answered.get("query_id")
        if not ended:  # the grade comes later: the prompt comes back now
            grades.follow(turn, partial(keep_final, last))
    except (Local2Error, TurnCancelled) as exc:  # the question is kept; the chat goes on
        abandon(view)
        report(exc)
    except KeyboardInterrupt:
        agent.turns.stop(session_id)
        abandon(view)
        report(TurnCancelled())


def until_answer(
    turn: BackgroundTurn, on_item: Callable[[str, Any], None]
) -> tuple[TurnPayload, bool]:
    """Show ``turn``'s items until its answer (or its end, when it never answered: paused,
    or failed); that payload, and whether the turn has ended."""
    for kind, data in turn:
        on_item(kind, data)
        if kind in ("answer", "final"):
            return data, kind == "final"
    raise RuntimeError("the turn ended without a payload")


def keep_final(last: LastTurn, final: TurnPayload) -> None:
    """The final payload of a turn, kept for /prefer and /retry if it is still the last."""
    if last.payload is not None and last.query_id == final.get("query_id"):
        last.payload = {**last.payload, **final}


def register(app: typer.Typer) -> None:
    app.command()(ask)
    app.command()(chat)
