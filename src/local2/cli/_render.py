"""How a turn looks at a terminal: thinking and tool calls on stderr, the answer on stdout.

What the model, a tool or a page wrote is never read as console markup (``[m1a2b3]``, a
memory's citation, would vanish; ``[/tmp]`` would stop the command): it is printed as text. A
whole answer is rendered as Markdown at a terminal, and written as it is to a pipe.

A compare turn prints both answers side by side, the judge's verdict and what to do next
(``local2 feedback ... --prefer``, ``local2 retry``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from local2 import events
from local2.cli._common import err, out

if TYPE_CHECKING:
    from local2.contracts import DocumentPassage, Grade, TurnPayload

ABANDONED = "[abandoned: the answer above was cut off and is not recorded]"


class TerminalView(TypedDict, total=False):
    """What a terminal has shown of a turn so far, as its items come."""

    hold: bool  # the answer is printed whole, once the answer guard has seen it
    thinking: bool  # "Thinking…" was printed
    live: str  # the answer text streamed so far
    writing: bool  # "writing…" was printed for the reply held back
    answered: bool
    answering: set[str]  # the respondents that have begun (a compare turn)


def _grade(critique: Grade | None) -> str:
    score = critique.get("score") if critique else None
    return f"{score}/5" if score is not None else "no grade"


def print_pair(payload: TurnPayload) -> None:
    """Both answers side by side, each with its model and grade."""
    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    respondents = payload.get("respondents") or {}
    table = Table(show_lines=True, expand=True)
    for rid in ("a", "b"):
        r = respondents[rid]
        table.add_column(f"{rid.upper()} · {r.get('label') or r.get('model')}", ratio=1)
    cells = []
    for rid in ("a", "b"):
        r = respondents[rid]
        text = Text(r.get("answer") or "")
        if not r.get("answer"):
            text.append(f"(no answer: {r.get('error')})", style="red")
        if critique := r.get("critique"):
            text.append(f"\ncritic: {_grade(critique)}", style="dim")
        cells.append(text)
    table.add_row(*cells)
    out.print(table)


def print_verdict(payload: TurnPayload) -> None:
    pairwise = payload.get("pairwise")
    winner = pairwise.get("winner") if pairwise else None
    reason = pairwise.get("reason") if pairwise else None
    verdict = {"a": "A is better", "b": "B is better", "tie": "a tie"}.get(
        winner or "", f"no verdict ({reason or 'not judged'})"
    )
    err.print(f"[dim]Judge (both orders): {escape(verdict)}.[/]")
    err.print(
        f"[dim]Your turn: local2 feedback {payload['session_id']} {payload['query_id']} "
        "--prefer a|b|tie (A continues the conversation until you prefer B).[/]"
    )


def show_compare_item(kind: str, data: Any, view: TerminalView) -> bool:
    """Render a compare or retry item; False when it is an ordinary one."""
    if kind == "respondent":
        rid = data["id"]
        if rid not in view.setdefault("answering", set()):
            view["answering"].add(rid)
            err.print(f"[dim]{rid.upper()} is answering…[/]")
        return True
    if kind == "answer" and data.get("respondents"):
        print_pair(data)
        return True
    if kind == "final" and data.get("pairwise"):
        print_verdict(data)
        return True
    if kind == "final" and data.get("retry"):
        retry = data["retry"]
        first, second = retry["first"].get("score"), retry["second"].get("score")
        err.print(
            f"[dim]Critic: first attempt {_grade({'score': first})}, this one "
            f"{_grade({'score': second})}; the conversation continues from attempt "
            f"{retry['shown']} (local2 retry {data['session_id']} {data['query_id']} "
            "--show 1|2 switches).[/]"
        )
        return True
    if kind == "final" and data.get("retry_offered"):
        critique = data.get("critique")
        feedback = critique.get("feedback", "") if critique else ""
        err.print(f"[dim]Critic: {_grade(critique)} — {escape(feedback)}[/]")
        err.print(
            "[yellow]Low grade. Try again with the critic's feedback: "
            f"local2 retry {data['session_id']} {data['query_id']}[/]"
        )
        return True
    return False


WRITING = "writing…"


# data: an event entry, its subject beside the event's own fields (as local2.events has them)
def _show_event(data: dict[str, Any], state: TerminalView) -> None:
    subject = data["subject"]
    if subject.startswith("tool.request."):
        state["live"] = ""  # what streamed was a tool call, not the answer
        state["writing"] = False  # the next reply gets its own "writing…" line
        args = escape(json.dumps(data.get("args"), ensure_ascii=False))
        err.print(f"\n[cyan]⚙ {data['tool']}[/] {args} …")
    elif subject.startswith("tool.result."):
        status = f"[red]{escape(data['error'])}[/]" if data.get("error") else "[green]done[/]"
        err.print(f"[cyan]⚙ {data['tool']}[/] {status} ({data.get('duration_s', 0):.2f}s)")
    elif subject in (events.TOOL_APPROVAL_GRANTED, events.TOOL_APPROVAL_DENIED):
        verdict = "approved" if subject == events.TOOL_APPROVAL_GRANTED else "denied"
        who = "" if data.get("by") == "person" else " (no one could be asked)"
        err.print(f"[yellow]⚙ {data['tool']} {verdict}{who}[/]")
    elif subject == events.TOOL_LOOP_LIMIT:
        err.print(f"[yellow]Tool limit of {data['limit']} rounds reached: answering now.[/]")
    elif subject == events.DOCUMENTS_RECALL:  # the session's attached documents' passages
        found = escape(document_hits_text(data.get("found") or []))
        err.print(f"[magenta]Document hits[/] {found}")
    elif subject == events.DOCUMENTS_RECALL_FAILED:
        said = escape(str(data.get("error")))
        err.print(f"[yellow]Attached documents could not be searched ({said}).[/]")
    elif subject == events.MEMORY_INGEST_FAILED:
        said = escape(str(data.get("error")))
        err.print(f"[yellow]Memory could not store this turn ({said}); will retry.[/]")


def document_hits_text(found: Sequence[DocumentPassage]) -> str:
    """``my-documents/a.pdf page 3 (0.61) · my-documents/b.pptx slide 2 (0.44)``."""
    shown = []
    for hit in found:
        unit = hit.get("unit") or "page"
        page = f" {unit} {hit['page']}" if hit.get("page") is not None else ""
        shown.append(f"{hit.get('file')}{page} ({float(hit.get('score') or 0):.2f})")
    return " · ".join(shown)


def hold_back(native_tools: bool) -> TerminalView:
    """The view of a turn for :func:`show_item`. A model that cannot call tools natively
    often ends with raw tool output, a copied listing or an unrun call, which the answer
    guard replaces: its reply is held back until the guard has seen it (a "writing…" line
    meanwhile), so what is printed is what is kept. A tool-capable model's streams."""
    return {"hold": not native_tools}


def show_item(kind: str, data: Any, state: TerminalView) -> None:
    """Render one stream item for a person at a terminal."""
    if show_compare_item(kind, data, state):  # two respondents, or a retry
        return
    if kind == "thinking":
        if not state.get("thinking"):
            err.print("[dim]Thinking…[/]")
            state["thinking"] = True
        err.print(Text(data, style="dim"), end="")
    elif kind == "token":
        if state.get("hold"):  # the answer item prints it, once the guard has seen it
            if not state.get("writing"):
                err.print(f"[dim]{WRITING}[/]")
                state["writing"] = True
            return
        if state.get("thinking") and not state.get("live"):
            err.print()
        out.print(data, end="", markup=False)
        state["live"] = state.get("live", "") + data
    elif kind == "event":
        _show_event(data, state)
    elif kind == "answer":
        state["answered"] = True
        # The streamed text is shown as it comes; print the clean answer when it differs
        # (inline thinking or tool-call markup removed).
        live = state.get("live", "")
        if live.strip() != data["answer"].strip():
            if live:
                out.print()
                err.print("[dim]The answer as recorded (what streamed above was cleaned up):[/]")
            print_answer(data["answer"])
        out.print()
    elif kind == "final" and data.get("critique"):
        crit = data["critique"]
        score = crit.get("score")
        grade = f"{score}/5" if score is not None else "no grade"
        err.print(f"[dim]Critic: {grade} — {escape(str(crit.get('feedback', '')))}[/]")


def print_answer(text: str) -> None:
    """A whole answer: rendered as Markdown at a terminal (links with their address shown),
    the text as it is elsewhere."""
    from rich.markdown import Markdown  # markdown-it: only when an answer is printed whole

    if out.is_terminal:
        out.print(Markdown(text, hyperlinks=False))
    else:
        out.print(text, end="", markup=False, highlight=False)


def abandon(state: TerminalView) -> None:
    """The turn failed or was stopped: mark answer text already printed as not recorded."""
    if state.get("live") and not state.get("answered"):
        out.print()
        out.print(ABANDONED, markup=False)


def rated(result: Mapping[str, Any]) -> str:
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


def print_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def listed_plainly(rows: Sequence[Any], as_json: bool, empty: str, to: Console = out) -> bool:
    """What a list command prints before any table: the rows as JSON (``--json``), or
    ``empty`` on ``to`` when there are none. True when it printed either (then no table)."""
    if as_json:
        print_json(rows)
        return True
    if not rows:
        to.print(empty)
        return True
    return False
