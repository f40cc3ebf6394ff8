"""What the person says to a running run, applied at its next step boundary.

A say (``POST /research/{id}/steer``, the app's Send / Stop) goes into the run's inbox in the
store (:mod:`local2.storage._research_steers`), so it reaches the run in whichever process
runs it. ``execute``, the scheduler between steps (and so between rounds), reads what came
since the last say it applied and applies it before handing out the next steps:

- ``text``: kept in the run's notes, which the next planner request, the reflection and the
  report are given (:func:`person_brief`);
- ``add``: a new sub-question, searched and read from the next boundary on (a search the
  run already made is read further, never repeated);
- ``drop``: the sub-question's pending steps are skipped and its sources are left out of the
  report (:func:`usable_ledger`);
- ``stop`` a sub-question: its pending steps are skipped, what it read is kept;
  ``stop: run``: every pending step is skipped and the report is written from what was read.

Each is shown in the event log (``research.steer``, with what it did). A step that already
ran is never run again, and one already running finishes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import STOP_RUN, EventEntry, SteerRecord, SubQuestion
from local2.graph import Services, TurnContext, event
from local2.research.ledger import Source
from local2.research.plan_schema import COMPOSE
from local2.research.state import ResearchState, ResearchUpdate, StepRecord
from local2.research.step_tools import step_catalog
from local2.research.subquestions import new_subquestion, next_step_number

if TYPE_CHECKING:
    from local2.storage import SteerInbox

DROPPED = "dropped"
STOPPED = "stopped"
STOPPED_BY_PERSON = "the person stopped the run"  # the run's ``stopped``: why it ended early


def person_brief(state: ResearchState) -> str:
    """What the person said, for the model: their answer to the clarifying question, their
    notes during the run, and the sub-questions they dropped."""
    lines = []
    clarified = state.get("clarification")
    if clarified and clarified.get("answer"):
        lines.append(f"Asked {clarified['question']!r}, the person answered: {clarified['answer']}")
    lines += [f"The person says: {note}" for note in state.get("notes") or []]
    dropped = [q["text"] for q in state.get("subquestions") or [] if q["status"] == DROPPED]
    if dropped:
        lines.append(
            "The person dropped these sub-questions: leave them out: " + "; ".join(dropped)
        )
    return "\n".join(lines)


def answered_question(state: ResearchState) -> str:
    """The question with the person's answer to the clarifying question, as a search takes
    it when no model plans."""
    clarified = state.get("clarification")
    answer = clarified["answer"] if clarified else ""
    return f"{state['question']} {answer}".strip() if answer else state["question"]


def usable_ledger(state: ResearchState) -> list[Source]:
    """The ledger without the sources of dropped sub-questions (numbers unchanged)."""
    ledger = state.get("ledger") or []
    dropped = {q["id"] for q in state.get("subquestions") or [] if q["status"] == DROPPED}
    if not dropped:
        return list(ledger)
    steps = state.get("steps") or {}
    return [s for s in ledger if (steps.get(s["step"]) or {}).get("branch") not in dropped]


def inbox_of(runtime: Runtime[TurnContext]) -> SteerInbox | None:
    """The run's inbox, when it has one (a run on LangGraph Server has none)."""
    return getattr(runtime.context, "inbox", None)


class _Says:
    """The run's steps, order and sub-questions as the says change them."""

    def __init__(self, state: ResearchState, services: Services) -> None:
        self.state = state
        self.services = services
        self.steps: dict[str, StepRecord] = dict(state.get("steps") or {})
        self.order = list(state.get("order") or [])
        self.subs: list[SubQuestion] = [copy.copy(q) for q in state.get("subquestions") or []]
        self.notes = list(state.get("notes") or [])
        self.changed: dict[str, StepRecord] = {}
        self.stopped = state.get("stopped")
        self.last_step = next_step_number(state) - 1

    def apply(self, say: SteerRecord) -> str:
        """Apply one say; what it did, in words for the event log."""
        kind, value = say["kind"], say["value"]
        if kind == "text":
            self.notes.append(value)
            return "noted for the next plan and the report"
        if kind == "add":
            return self._add(value)
        if kind == "stop" and value == STOP_RUN:
            self.stopped = STOPPED_BY_PERSON
            skipped = self._skip(None, STOPPED_BY_PERSON)
            return f"stopped: {skipped} step(s) left out; the report is written from what was read"
        found = self._find(value)
        if found is None:
            known = ", ".join(
                f"{q['id']} ({q['text']})" for q in self.subs if q["status"] == "open"
            )
            return f"no open sub-question {value!r} (open: {known or 'none'})"
        found["status"] = DROPPED if kind == "drop" else STOPPED
        why = f"{'dropped' if kind == 'drop' else 'stopped'} by the person"
        skipped = self._skip(found["id"], why)
        kept = "its sources are left out" if kind == "drop" else "what it read is kept"
        return f"{found['id']} {why}: {skipped} pending step(s) left out, {kept}"

    def _find(self, value: str) -> SubQuestion | None:
        wanted = value.strip().lower()
        return next(
            (
                q
                for q in self.subs
                if q["status"] == "open" and wanted in (q["id"].lower(), q["text"].lower())
            ),
            None,
        )

    def _skip(self, subquestion: str | None, why: str) -> int:
        skipped = skip_pending(self.steps, self.order, subquestion, why)
        self.changed.update(skipped)
        self.steps.update(skipped)
        return len(skipped)

    def _add(self, text: str) -> str:
        if self.stopped and not self.state.get("followup"):  # a follow-up still searches
            return "not added: the run was stopped"
        view: ResearchState = {**self.state, "steps": self.steps, "order": self.order}
        tools = step_catalog(self.services)
        settings = self.services.settings.research
        records = new_subquestion(
            view, text, tools, settings, self.last_step + 1, self.state.get("forbidden") or []
        )
        if not records:
            return "not added: nothing here can search for it (or it failed before)"
        qid = f"q{1 + max([int(q['id'][1:]) for q in self.subs if q['id'][1:].isdigit()] or [0])}"
        round_n = self.state.get("round") or 1
        self.subs.append(
            SubQuestion(id=qid, text=text, status="open", round=round_n, origin="person")
        )
        compose = [i for i in self.order if self.steps[i]["tool"] == COMPOSE]
        for record in records:
            record["branch"] = qid
            self.changed[record["id"]] = self.steps[record["id"]] = record
        ids = [r["id"] for r in records]
        cut = self.order.index(compose[-1]) if compose else len(self.order)
        self.order[cut:cut] = ids
        self.last_step = max(self.last_step, *(int(i[1:]) for i in ids))
        return f"added {qid}: " + ", ".join(f"{r['id']} {r['tool']}" for r in records)

    def update(self, seen: int) -> ResearchUpdate:
        return {
            "steps": self.changed,
            "order": self.order,
            "subquestions": self.subs,
            "notes": self.notes,
            "stopped": self.stopped,
            "steer_seen": seen,
            "last_step": self.last_step,
        }


def skip_pending(
    steps: dict[str, StepRecord], order: list[str], subquestion: str | None, why: str
) -> dict[str, StepRecord]:
    """The pending steps of ``subquestion`` (None: every one) marked skipped with ``why``;
    the report's own step stays, so the report is still written."""
    skipped: dict[str, StepRecord] = {}
    for i in order:
        step = steps[i]
        if step["status"] != "pending" or step["tool"] == COMPOSE:
            continue
        if subquestion is None or step.get("branch") == subquestion:
            skipped[i] = copy.copy(step)
            skipped[i]["status"], skipped[i]["error"] = "skipped", why
    return skipped


def _new_says(state: ResearchState, inbox: SteerInbox | None) -> list[SteerRecord]:
    """The says in the run's inbox after the last one its state applied."""
    run_id = state.get("run_id") or ""
    return inbox.since(run_id, state.get("steer_seen") or 0) if inbox and run_id else []


def _said(state: ResearchState, say: SteerRecord, effect: str) -> EventEntry:
    return event(
        state,
        events.RESEARCH_STEER,
        seq=say["seq"],
        kind=say["kind"],
        value=say["value"],
        effect=effect,
    )


def take_says(
    state: ResearchState, services: Services, inbox: SteerInbox | None
) -> tuple[ResearchUpdate, list[EventEntry]]:
    """Apply the says that came since the last one applied: the update and its events
    (nothing, without an inbox or a say)."""
    says = _new_says(state, inbox)
    if not says:
        return {}, []
    working = _Says(state, services)
    log = [_said(state, say, working.apply(say)) for say in says]
    return working.update(says[-1]["seq"]), log + skipped_events(state, working.changed)


def skipped_events(state: ResearchState, steps: Mapping[str, StepRecord]) -> list[EventEntry]:
    """A ``research.step`` event for each step a say left out, as each step that runs has:
    a live checklist then shows it skipped, with why, instead of pending."""
    return [
        event(state, events.RESEARCH_STEP, id=i, status="skipped", reason=s.get("error"))
        for i, s in steps.items()
        if s.get("status") == "skipped"
    ]


def notes_only(
    state: ResearchState, inbox: SteerInbox | None
) -> tuple[ResearchUpdate, list[EventEntry]]:
    """After the last step boundary (the report is being written): free text still reaches
    the report; anything else came too late, and the log says so."""
    says = _new_says(state, inbox)
    if not says:
        return {}, []
    notes = list(state.get("notes") or [])
    log = []
    for say in says:
        if say["kind"] == "text":
            notes.append(say["value"])
            effect = "noted for the report"
        else:
            effect = "too late: every step had run; the report is being written"
        log.append(_said(state, say, effect))
    return {"notes": notes, "steer_seen": says[-1]["seq"]}, log
