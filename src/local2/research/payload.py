"""The research payload: one dict that says everything about a run (CLI ``--json``, API, app)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from local2.contracts import ResearchPayload, ResearchStep, RunStatus
from local2.research._plan import COMPOSE

STEP_FIELDS = (
    "id",
    "description",
    "tool",
    "args",
    "requires",
    "round",
    "status",
    "error",
    "branch",
    "followup",
)


def step_rows(state: Mapping[str, Any]) -> list[ResearchStep]:
    """The run's steps in plan order, without the text they found (that is in the ledger)."""
    steps = state.get("steps") or {}
    rows: list[ResearchStep] = []
    for step_id in state.get("order") or []:
        step = steps.get(step_id)
        if step is None:
            continue
        row = cast(ResearchStep, {k: step.get(k) for k in STEP_FIELDS})
        row["duration_s"] = step.get("duration_s", 0.0)
        row["calls"] = list(step.get("calls") or [])
        row["sources"] = len(step.get("found") or [])
        if step.get("tool") == COMPOSE and state.get("report") and step.get("status") != "skipped":
            row["status"] = "done"
        rows.append(row)
    return rows


def finished_status(state: Mapping[str, Any]) -> RunStatus:
    """A run with nothing left to run: stopped by the person, ended with no usable source
    (no report written), or done."""
    if state.get("stopped"):
        return "stopped"
    return "no_sources" if state.get("no_sources") else "done"


def looks_at(state: Mapping[str, Any]) -> list[str]:
    """The sources a run searches, by name (a run from before ``--sources`` took names: its
    ``web|library|both``)."""
    if state.get("looks_at"):
        return list(state["looks_at"])
    return {"both": ["web", "library"]}.get(
        str(state.get("looks_in")), [state.get("looks_in") or "web"]
    )


def research_payload(state: Mapping[str, Any]) -> ResearchPayload:
    event_log = list(state.get("event_log") or [])
    return {
        "run_id": state.get("run_id"),
        "question": state.get("question"),
        "status": finished_status(state) if state.get("report") else "unfinished",
        "stopped": state.get("stopped"),
        "no_sources": state.get("no_sources"),
        "goal": state.get("goal", ""),
        "plan": list(state.get("plans") or []),
        "steps": step_rows(state),
        "rounds": list(state.get("rounds") or []),
        "sources": list(state.get("sources") or []),
        "ledger_size": len(state.get("ledger") or []),
        "report": state.get("report", ""),
        "unsupported": list(state.get("unsupported") or []),
        "removed_links": list(state.get("removed_links") or []),
        "citations": state.get("citations", 0),
        "replans": state.get("replans", 0),
        "model": state.get("model"),
        "backend": state.get("backend"),
        "events": [e["subject"] for e in event_log],
        "event_log": event_log,
        "critique": state.get("critique"),
        "subquestions": list(state.get("subquestions") or []),
        "clarification": state.get("clarification"),
        "notes": list(state.get("notes") or []),
        "followups": list(state.get("followups") or []),
        "awaiting": None,  # what a paused run waits for: the service knows it
        "looks_at": looks_at(state),
        "scope": state.get("scope"),
    }
