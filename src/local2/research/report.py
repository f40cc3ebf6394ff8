"""``compose``, ``verify`` and ``publish``; then the chat graph's ``critique`` and ``ingest``.

``compose`` asks for the report over the ledger's numbered sources (those of dropped
sub-questions left out), within the model's context, with what the person said; ``verify``
keeps what the sources support and appends the references built from the ledger;
``publish`` announces the payload. A follow-up goes the same way to its own answer
(:mod:`local2.research.followup`). Grading and remembering reuse the chat
graph's nodes on a turn-shaped view of the run, so both behave exactly as for a chat turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import LOCAL_NAME, WEB_FETCH, WEB_SEARCH, ToolCallRecord
from local2.errors import GaveWay
from local2.graph import (
    Services,
    TurnContext,
    TurnState,
    TurnUpdate,
    call_model,
    event,
    grade_turn,
    push,
)
from local2.models import Cancellation, thinking_and_answer
from local2.research._plan import COMPOSE
from local2.research._planner import inbox_of, notes_only, person_brief, usable_ledger
from local2.research._prompts import compose_messages, followup_compose_messages
from local2.research._state import ResearchState, ResearchUpdate, StepRecord, source_list
from local2.research.followup import FOLLOWUP_DONE, followup_record
from local2.research.no_sources import no_sources, no_sources_markdown
from local2.research.payload import research_payload
from local2.research.verify import report_markdown, verify

EMPTY_DRAFT = "(The model wrote no report.)"
NOTHING = "no source to write from"
CHARS_PER_TOKEN = 2.5  # conservative, so the prompt fits a small model's context


def compose_budget(services: Services) -> int:
    """Characters of sources the model can be shown: the setting, or what fits its context."""
    budget = services.settings.research.compose_chars
    if services.backend == "embedded":
        emb = services.settings.embedded
        budget = min(budget, max(1000, int((emb.n_ctx - emb.max_tokens - 600) * CHARS_PER_TOKEN)))
    return budget


def compose(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> ResearchUpdate:
    services = runtime.context.services
    settings = services.settings.research
    said: ResearchUpdate = {}
    log: list[Any] = []
    if not state.get("followup"):  # what the person said after the last step still counts
        said, log = notes_only(state, inbox_of(runtime))
    view: ResearchState = {**state, **said}  # type: ignore[typeddict-item]  # this node's own update
    ledger = usable_ledger(view)
    brief = person_brief(view)
    budget = compose_budget(services)
    followup = view.get("followup")
    if followup:
        messages = followup_compose_messages(
            view["question"], followup, ledger, settings.source_chars, budget, brief
        )
    else:
        messages = compose_messages(view["question"], ledger, settings.source_chars, budget, brief)
    pending = [
        s
        for s in (state.get("steps") or {}).values()
        if s["tool"] == COMPOSE and s["status"] == "pending"
    ]
    draft, log = _write(
        view, pending, log, lambda: call_model(services, messages, config, tools=False)
    )
    finished: dict[str, StepRecord | None] = {
        s["id"]: {**s, "status": "done"} if draft else {**s, "status": "skipped", "error": NOTHING}
        for s in pending
    }
    return {
        **said,
        "draft": draft,
        "steps": finished,
        "event_log": log,
    }


def _write(
    view: ResearchState, pending: list[StepRecord], log: list[Any], ask: Callable[[], Any]
) -> tuple[str, list[Any]]:
    """The draft ``ask`` brings, with its compose steps' events (started, then done), or
    none when there is no source to write from (no model is asked: verify says why)."""
    ledger = usable_ledger(view)
    if not ledger and not view.get("followup"):
        skipped = [
            event(view, events.RESEARCH_STEP, id=s["id"], status="skipped", reason=NOTHING)
            for s in pending
        ]
        return "", [*log, *skipped]
    began = time.time()
    log = [
        *log,
        *(
            event(view, events.RESEARCH_STEP, id=s["id"], status="started", tool=COMPOSE)
            for s in pending
        ),
    ]
    _thinking, answer = thinking_and_answer(ask())
    took = round(time.time() - began, 3)
    done = [
        event(
            view,
            events.RESEARCH_STEP,
            id=s["id"],
            status="done",
            tool=COMPOSE,
            duration_s=took,
            error=None,
            sources=len(ledger),
        )
        for s in pending
    ]
    return answer.strip() or EMPTY_DRAFT, [*log, *done]


def verify_report(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    ledger = usable_ledger(state)
    followup = state.get("followup")
    checked = verify(state.get("draft") or "", ledger, followup or state["question"])
    if followup:
        record = followup_record(state, checked, ledger)
        entry = event(
            state,
            events.RESEARCH_ANSWER,
            n=record["n"],
            sources=len(record["sources"]),
            citations=record["citations"],
            unsupported=len(record["unsupported"]),
            from_ledger=record["from_ledger"],
        )
        return {"followups": [record], "event_log": [entry]}
    if not ledger and not state.get("stopped"):  # nothing to report: what was tried, and then
        return no_sources_update(state)
    references = checked.references(ledger)
    why = "" if ledger else why_no_sources(state)
    scope = state.get("scope")
    said = scope["said"] if scope else ""
    report = report_markdown(state["question"], checked, references, why, said)
    unsupported = [u.as_dict() for u in checked.unsupported]
    sources = source_list(references)
    entry = event(
        state,
        events.RESEARCH_REPORT,
        sources=len(sources),
        citations=checked.citations,
        unsupported=len(unsupported),
        removed_links=len(checked.removed_links),
    )
    return {
        "report": report,
        "body": checked.body,
        "unsupported": unsupported,
        "sources": sources,
        "citations": checked.citations,
        "removed_links": checked.removed_links,
        "event_log": [entry],
    }


def why_no_sources(state: ResearchState) -> str:
    """Why a run the person stopped reached its report with no source, in words for it."""
    steps = state.get("steps") or {}
    ran = [s for s in steps.values() if s["tool"] != "compose" and s["status"] != "skipped"]
    when = "before any source was found" if ran else "before anything was searched or read"
    return f"No sources: the person stopped the run {when}."


def no_sources_update(state: ResearchState) -> ResearchUpdate:
    """The run ends ``no_sources``: what it tried and the next step, in the report's place."""
    found = no_sources(state)
    entry = event(
        state,
        events.RESEARCH_REPORT,
        sources=0,
        citations=0,
        unsupported=0,
        removed_links=0,
        no_sources=found["cause"],
    )
    return {
        "report": no_sources_markdown(state["question"], found),
        "body": "",
        "unsupported": [],
        "sources": [],
        "citations": 0,
        "removed_links": [],
        "no_sources": found,
        "event_log": [entry],
    }


def publish(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    if state.get("followup"):  # the follow-up's answer, and the run ends there
        answered = (state.get("followups") or [])[-1:]
        push({"followup": answered[0] if answered else None})
        return {"followup": None, "decision": FOLLOWUP_DONE}
    push({"payload": research_payload(dict(state))})
    return {"decision": ""}


def _as_turn(state: ResearchState) -> TurnState:
    """The run as the chat graph's nodes see a turn: the report answers the question, and
    each ledger source is the evidence a tool call brought."""
    evidence: list[ToolCallRecord] = [
        {
            "id": f"source-{s['n']}",
            "tool": s.get("tool") or (WEB_FETCH if s["kind"] == "page" else WEB_SEARCH),
            "args": {"url": s["url"]},
            "result": f"[{s['n']}] {s['title']}\nURL: {s['url']}\n{s['text']}",
            "error": None,
            "duration_s": 0.0,
        }
        for s in state.get("ledger") or []
    ]
    return {
        "query": state["question"],
        "answer": state.get("report") or "",
        "tool_calls": evidence,
        "memory_hits": [],
        "query_id": state.get("run_id", ""),
        "session_id": state.get("run_id", ""),
        "started_at": state.get("started_at") or time.time(),
        "model": state.get("model", ""),
        "error": None,
        "owner": state.get("owner") or LOCAL_NAME,  # graded and remembered as theirs
    }


def _as_run(update: TurnUpdate) -> ResearchUpdate:
    """The chat critic's or memory's update as the run's: a grade and events (all either
    writes of a turn it is given)."""
    graded: ResearchUpdate = {}
    if "critique" in update:
        graded["critique"] = update["critique"]
    if "event_log" in update:
        graded["event_log"] = update["event_log"]
    return graded


def critique_run(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    """Grade the report, as the chat critic grades an answer; when the person's next
    question comes first (``give_way``), the critic's request is cancelled and the grade is
    owed (``grade_owed``, ``critique.deferred``): given later, by :func:`late_grade`."""
    try:
        context = runtime.context
        return _as_run(grade_turn(_as_turn(state), context.services, context.give_way))
    except GaveWay:
        run_id = state.get("run_id")
        deferred = event(state, events.CRITIQUE_DEFERRED, query_id=run_id, run_id=run_id)
        return {"grade_owed": True, "event_log": [deferred]}


def late_grade(
    state: ResearchState, services: Services, give_way: Cancellation | None = None
) -> ResearchUpdate:
    """The grade a run owes, given now (:class:`~local2.errors.GaveWay` if the person asks
    again first: it stays owed); the update to write as the ``critique`` node's."""
    return {**_as_run(grade_turn(_as_turn(state), services, give_way)), "grade_owed": False}


def ingest_run(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    from local2.graph import remember_turn  # memory is slow to import: only when used

    return _as_run(remember_turn(_as_turn(state), runtime.context.services))
