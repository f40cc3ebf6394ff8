"""What a person sends a research run, checked before it reaches the run.

A paused run's answer (:class:`~local2.contracts._research_input.ResearchInput`) is checked
against what it waits for, and an edited plan against the plan's rules, here, before the
run resumes: a plan that breaks them is refused with the reasons (422) and the run stays
paused, untouched. A say (:class:`~local2.contracts._research_input.Steer`) is checked
against the run's sub-questions before it goes into the run's inbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from langgraph.types import StateSnapshot
from pydantic import ValidationError

from local2.contracts import (
    STOP_RUN,
    PendingInput,
    PlanEdit,
    ResearchInput,
    ResearchRequest,
    Steer,
)
from local2.errors import InvalidInput, RunNotReady
from local2.graph import Services
from local2.research import ResearchState, apply_edit, step_catalog

KIND = "research_input"


def pending_request(snapshot: StateSnapshot) -> PendingInput | None:
    """What a paused run waits for, with the interrupt's id, or None."""
    for interrupt in snapshot.interrupts:
        value = interrupt.value
        if isinstance(value, Mapping) and value.get("kind") == KIND:
            request: ResearchRequest = interrupt.value  # as the pausing node made it
            return {**request, "interrupt_id": interrupt.id}
    return None


def _invalid(exc: ValidationError, what: str) -> InvalidInput:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or what}: {e['msg']}" for e in exc.errors()
    )
    return InvalidInput(f"The {what} cannot be used: {problems}", "Correct it and send it again.")


M = TypeVar("M", ResearchInput, Steer, PlanEdit)


def _read(model: type[M], value: M | Mapping[str, Any], what: str) -> M:
    """``value`` as ``model``, or :class:`InvalidInput` saying what is wrong with it."""
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(dict(value))
    except ValidationError as exc:
        raise _invalid(exc, what) from None


def read_input(value: ResearchInput | Mapping[str, Any]) -> ResearchInput:
    return _read(ResearchInput, value, "input")


def read_steer(value: Steer | Mapping[str, Any]) -> Steer:
    return _read(Steer, value, "say")


def read_plan(value: PlanEdit | Mapping[str, Any] | str) -> PlanEdit:
    """A plan as given: an edit, its JSON, or one sub-question a line."""
    if isinstance(value, str):
        try:
            return PlanEdit.from_lines(value)
        except ValidationError as exc:
            raise _invalid(exc, "plan") from None
    return _read(PlanEdit, value, "plan")


def check_plan_edit(
    values: ResearchState, edit: PlanEdit, services: Services, paused: bool = True
) -> None:
    """Raise :class:`InvalidInput` naming every rule ``edit`` breaks (nothing changes)."""
    _, errors = apply_edit(values, edit, step_catalog(services), services.settings.research)
    if errors:
        stays = "the run stays paused" if paused else "nothing was started"
        raise InvalidInput(
            f"The plan cannot be run as edited ({stays}): " + "; ".join(errors),
            "Change the plan and send it again.",
        )


def check_input(
    run_id: str,
    request: ResearchRequest | Mapping[str, Any],
    value: ResearchInput,
    values: ResearchState,
    services: Services,
) -> None:
    """``value`` answers what the run waits for, and an edited plan keeps the rules."""
    waits = request.get("waits_for")
    if waits == "plan" and value.answer is not None:
        raise InvalidInput(
            f"Run {run_id} waits for its plan, not an answer.",
            "Send {approve: true}, or the plan edited: {plan: {subquestions: [...]}}.",
        )
    if value.plan is not None:
        check_plan_edit(values, value.plan, services)


def check_steer(run_id: str, say: Steer, values: ResearchState) -> None:
    """A say that names a sub-question names an open one of this run."""
    if say.kind not in ("drop", "stop") or say.value == STOP_RUN:
        return
    subs = [q for q in values.get("subquestions") or [] if q["status"] == "open"]
    wanted = say.value.lower()
    if not any(wanted in (q["id"].lower(), q["text"].lower()) for q in subs):
        listed = ", ".join(f"{q['id']} ({q['text']})" for q in subs) or "none"
        raise InvalidInput(
            f"Run {run_id} has no open sub-question {say.value!r}.",
            f'Name one by its id or its text: {listed}; or stop the whole run: {{stop: "run"}}.',
        )


def not_ready(run_id: str, status: str, asked: str) -> RunNotReady:
    """The run is not in the state ``asked`` needs: what it is, and what to do instead."""
    fixes = {
        "awaiting_input": (
            f"It waits for input: POST /research/{run_id}/input "
            "({approve}, {plan} or {answer}; {stop: true} ends it)."
        ),
        "done": f"It has finished: ask a follow-up, POST /research/{run_id}/followup.",
        "stopped": f"It was stopped: ask a follow-up, POST /research/{run_id}/followup.",
        "no_sources": (
            "It found no source, so it has no report to ask about: research the question "
            "again after the next step its notice gives."
        ),
        "running": f"Wait for it to finish, or steer it: POST /research/{run_id}/steer.",
    }
    fix = fixes.get(status, f"Resume it first: POST /research/{run_id}/resume.")
    # The fix is in the message too: the API's 409 carries the message alone.
    state = {"no_sources": "finished with no source"}.get(status, status.replace("_", " "))
    return RunNotReady(f"Run {run_id} is {state}: {asked}. {fix}", fix)
