"""The run waits for the person: a clarifying question before it plans, and its plan before
the first search (LangGraph ``interrupt``, over the run's checkpointer, so a pause survives
a restart and LangGraph Server shows it as the thread's interrupt).

The node that leads into a pause records it (``research.awaiting_input`` in the checkpointed
log); the pausing node (``ask``, ``review``) does nothing before ``interrupt()`` but build the
request from the state, so running it again on resume (LangGraph re-runs a node from its top)
repeats nothing. The answer is a :class:`~local2.contracts._research_input.ResearchInput`,
given as ``response_schema`` so LangGraph validates it (nothing is saved when it does not
fit, and the pause can be answered again) and Studio shows its form. A plan edit that breaks
the rules is refused with its reasons: ``review`` records them and routes to itself, pausing
again with the reasons in its request, rather than looping inside the node, whose earlier
answers every resume would replay. ``{stop: true}`` answers either pause: the run leaves it
with every pending step left out (``stopped``, as a running run's Stop does) and goes on to
its report, written from what was read (:func:`stopped_here`).
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from local2 import events
from local2.contracts import PlanRecord, ResearchInput, ResearchRequest, WaitsFor
from local2.graph import TurnContext, event
from local2.research.plan_schema import CLARIFY_CHARS, READINGS, Plan
from local2.research.state import ResearchState, ResearchUpdate
from local2.research.steering import STOPPED_BY_PERSON, skip_pending, skipped_events
from local2.research.step_tools import step_catalog
from local2.research.structured import Structured
from local2.research.subquestions import apply_edit, plan_view

KIND = "research_input"
WRONG_INPUT = "The run waits for its plan: approve it ({approve: true}) or send it edited ({plan})."


def resume_path(run_id: str) -> str:
    return f"/research/{run_id}/input"


def request_of(state: ResearchState, waits_for: WaitsFor) -> ResearchRequest:
    """What the paused run shows and waits for, built from its state alone."""
    subs, steps = plan_view(state)
    run_id = state.get("run_id") or ""
    return {
        "kind": "research_input",
        "waits_for": waits_for,
        "run_id": run_id,
        "question": state["question"],
        "goal": state.get("goal") or "",
        "subquestions": subs if waits_for == "plan" else [],
        "steps": steps if waits_for == "plan" else [],
        "clarify": state.get("clarify_request") if waits_for == "answer" else None,
        "error": state.get("review_error") if waits_for == "plan" else None,
        "resume": resume_path(run_id),
    }


def ask_first(view: ResearchState, plan: Plan, asked: Structured[Plan]) -> ResearchUpdate:
    """The planner asks the person one question before planning (its steps wait)."""
    assert plan.clarify is not None
    readings = [" ".join(r.split()) for r in plan.clarify.readings if r.strip()][:READINGS]
    question = " ".join(plan.clarify.question.split())[:CLARIFY_CHARS]
    entry = event(
        view, events.RESEARCH_AWAITING, waits_for="answer", question=question, readings=readings
    )
    record: PlanRecord = {
        "round": view.get("round") or 1,
        "origin": "clarify",
        "reason": "the question can be read more than one way: the person is asked first",
        "goal": plan.goal,
        "steps": [],
        "attempts": asked.summary(),
    }
    return {
        "clarify_request": {"question": question, "readings": readings},
        "decision": "ask",
        "plans": [record],
        "event_log": [entry],
    }


def awaiting_plan(view: ResearchState, update: ResearchUpdate) -> ResearchUpdate:
    """``update`` (a plan just adopted) with the review's pause recorded after it."""
    steps = {**(view.get("steps") or {}), **(update.get("steps") or {})}
    after: ResearchState = {
        **view,
        **update,  # type: ignore[typeddict-item]  # the plan node's own update of this state
        "steps": {i: s for i, s in steps.items() if s is not None},
    }
    subs, _ = plan_view(after)
    entry = event(
        after,
        events.RESEARCH_AWAITING,
        waits_for="plan",
        subquestions=[{"id": q["id"], "text": q["text"], "steps": q["steps"]} for q in subs],
    )
    return {**update, "event_log": [*(update.get("event_log") or []), entry]}


def ask(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    """Pause with the clarifying question; the answer goes into the plan (an approval or
    an empty answer: research the question as written; a plan: the person's plan)."""
    value = interrupt(request_of(state, "answer"), response_schema=ResearchInput)
    if value.stop:
        return stopped_here(state, "answer")
    answer = " ".join((value.answer or "").split())
    asked = state.get("clarify_request")
    entry = event(state, events.RESEARCH_INPUT, waits_for="answer", answer=answer or None)
    update: ResearchUpdate = {
        "clarification": {
            "question": str((asked.get("question") if asked else None) or ""),
            "readings": list((asked.get("readings") if asked else None) or []),
            "answer": answer,
        },
        "clarify_request": None,
        "decision": "",
        "event_log": [entry],
    }
    if value.plan is not None:
        update["given_plan"] = value.plan.model_dump(exclude_none=True)
    return update


def review(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    """Pause with the plan; go on with it approved, or as the person edited it."""
    value = interrupt(request_of(state, "plan"), response_schema=ResearchInput)
    if value.stop:
        return stopped_here(state, "plan")
    if value.plan is None and not value.approve:
        return refused(state, WRONG_INPUT)
    if value.plan is None:
        entry = event(state, events.RESEARCH_INPUT, waits_for="plan", approved=True)
        return {"reviewed": True, "review_error": None, "event_log": [entry]}
    services = runtime.context.services
    update, errors = apply_edit(
        state, value.plan, step_catalog(services), services.settings.research
    )
    if errors:
        return refused(state, "; ".join(errors))
    edited = [q["text"] for q in update.get("subquestions") or [] if q["status"] == "open"]
    entry = event(state, events.RESEARCH_INPUT, waits_for="plan", edited=True, plan=edited)
    log = [entry, *(update.get("event_log") or [])]
    return {**update, "reviewed": True, "review_error": None, "event_log": log}


def stopped_here(state: ResearchState, waits_for: WaitsFor) -> ResearchUpdate:
    """Stop pressed at a pause: the run ends as a running run's Stop ends it, its pending
    steps left out (shown, with why) and its report written from what was read."""
    steps = skip_pending(
        state.get("steps") or {}, state.get("order") or [], None, STOPPED_BY_PERSON
    )
    said = event(state, events.RESEARCH_INPUT, waits_for=waits_for, stopped=True)
    left_out = skipped_events(state, steps)
    return {
        "stopped": STOPPED_BY_PERSON,
        "steps": steps,
        "clarify_request": None,
        "reviewed": True,  # nothing is left to review: on to execute, which stops
        "review_error": None,
        "decision": "",
        "event_log": [said, *left_out],
    }


def refused(state: ResearchState, why: str) -> ResearchUpdate:
    """The plan sent breaks a rule: say why, and wait for the plan again."""
    return {
        "review_error": why,
        "event_log": [
            event(state, events.RESEARCH_INPUT, waits_for="plan", refused=why),
            event(state, events.RESEARCH_AWAITING, waits_for="plan", error=why),
        ],
    }


def after_ask(state: ResearchState) -> str:
    return "execute" if state.get("stopped") else "plan"


def after_review(state: ResearchState) -> str:
    return "review" if not state.get("reviewed") else "execute"
