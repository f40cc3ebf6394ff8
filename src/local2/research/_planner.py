"""The planning nodes and the person in a run: ``plan`` and ``replan``, the pauses that wait for
the person (a clarifying question, the plan under review), and what the person says to a
running run, applied at its next step boundary.

- ``plan`` makes the first plan, and in later rounds the plan for the gaps ``reflect``
  named; ``replan`` replaces the steps still pending after a step failed for good. Both ask
  with the plan's JSON schema and take the fallback when the model's plan breaks the rules
  (the plan itself: :mod:`local2.research._plan`), saying why in the person's words. A
  search no other query can cure (no network) plans only the report (:func:`closed_search`).
- ``ask`` and ``review`` pause the run (LangGraph ``interrupt``, over the run's
  checkpointer, so a pause survives a restart).
- A say (``text``, ``add``, ``drop``, ``stop``) goes into the run's inbox in the store and is
  applied by ``execute`` before it hands out the next steps (:func:`take_says`).
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from local2 import events
from local2.contracts import (
    STOP_RUN,
    EventEntry,
    PlanEdit,
    PlanRecord,
    ResearchInput,
    ResearchRequest,
    SteerRecord,
    SubQuestion,
    WaitsFor,
)
from local2.graph import Services, TurnContext, event
from local2.research._plan import (
    CLARIFY_CHARS,
    COMPOSE,
    READINGS,
    SKIPPED,
    Plan,
    PlanStep,
    Structured,
    adopt,
    apply_edit,
    ask_structured,
    call_key,
    check_plan,
    fallback_plan,
    fallback_words,
    gave_up,
    new_subquestion,
    next_step_number,
    parse_plan,
    plan_schema,
    plan_view,
    remember,
    skipped,
)
from local2.research._prompts import hopped, observation, plan_messages, replan_messages
from local2.research._state import (
    FROM_STEP,
    TOP,
    ResearchState,
    ResearchUpdate,
    Source,
    StepRecord,
    StepTool,
    StepTools,
    step_catalog,
    url_key,
)
from local2.tools import LIBRARY_EMPTY, OUT_OF_SCOPE

if TYPE_CHECKING:
    from local2.storage import SteerInbox

# The rule's hop searches a name with the question's words: the name's page is its best
# result not read yet, so that one is read (execute reads no more for it).
HOP_READS = 1


# --- steering ---------------------------------------------------------------------------
# What the person says to a running run, applied at its next step boundary.
#
# A say (``POST /research/{id}/steer``, the app's Send / Stop) goes into the run's inbox in the
# store (:mod:`local2.storage._research_runs`), so it reaches the run in whichever process
# runs it. ``execute``, the scheduler between steps (and so between rounds), reads what came
# since the last say it applied and applies it before handing out the next steps:
#
# - ``text``: kept in the run's notes, which the next planner request, the reflection and the
#   report are given (:func:`person_brief`);
# - ``add``: a new sub-question, searched and read from the next boundary on (a search the
#   run already made is read further, never repeated);
# - ``drop``: the sub-question's pending steps are skipped and its sources are left out of the
#   report (:func:`usable_ledger`);
# - ``stop`` a sub-question: its pending steps are skipped, what it read is kept;
#   ``stop: run``: every pending step is skipped and the report is written from what was read.
#
# Each is shown in the event log (``research.steer``, with what it did). A step that already
# ran is never run again, and one already running finishes.

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
    """The ledger without the sources of dropped sub-questions, nor the hits whose page,
    once read, dated itself outside the run's window (numbers unchanged)."""
    ledger = state.get("ledger") or []
    dropped = {q["id"] for q in state.get("subquestions") or [] if q["status"] == DROPPED}
    outside = dated_outside(state)
    if not dropped and not outside:
        return list(ledger)
    steps = state.get("steps") or {}
    return [
        s
        for s in ledger
        if (steps.get(s["step"]) or {}).get("branch") not in dropped
        and url_key(s["url"]) not in outside
    ]


def dated_outside(state: ResearchState) -> set[str]:
    """The URL keys of the pages a read left out as out of scope: their own metadata dates
    them outside the run's window (``web_fetch`` within it: tools' ``ScopedFetch``), so the
    search's undated hit of each goes no further either."""
    keys: set[str] = set()
    for step in (state.get("steps") or {}).values():
        for call in step.get("calls") or []:
            url = call["args"].get("url")
            if str(call.get("error") or "").startswith(OUT_OF_SCOPE) and isinstance(url, str):
                keys.add(url_key(url))
    return keys


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


# --- pauses -----------------------------------------------------------------------------
# The run waits for the person: a clarifying question before it plans, and its plan before
# the first search (LangGraph ``interrupt``, over the run's checkpointer, so a pause survives
# a restart and LangGraph Server shows it as the thread's interrupt).
#
# The node that leads into a pause records it (``research.awaiting_input`` in the checkpointed
# log); the pausing node (``ask``, ``review``) does nothing before ``interrupt()`` but build the
# request from the state, so running it again on resume (LangGraph re-runs a node from its top)
# repeats nothing. The answer is a :class:`~local2.contracts._research_input.ResearchInput`,
# given as ``response_schema`` so LangGraph validates it (nothing is saved when it does not
# fit, and the pause can be answered again) and Studio shows its form. A plan edit that breaks
# the rules is refused with its reasons: ``review`` records them and routes to itself, pausing
# again with the reasons in its request, rather than looping inside the node, whose earlier
# answers every resume would replay. ``{stop: true}`` answers either pause: the run leaves it
# with every pending step left out (``stopped``, as a running run's Stop does) and goes on to
# its report, written from what was read (:func:`stopped_here`).

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


# --- planner ----------------------------------------------------------------------------
# ``plan`` and ``replan``: a valid plan every time, from the model or from the fallback.
#
# ``plan`` makes the first plan, and in later rounds the plan for the gaps ``reflect`` named.
# A plan the person gave is adopted as theirs, without asking the model; with ``clarify:
# auto`` the first plan may instead ask the person one question (``clarify`` in the plan's
# schema), and the steps are planned again with the answer (:mod:`local2.research._planner`).
# Every plan request carries what the person said (:func:`~local2.research._planner.person_brief`).
# ``replan`` replaces the steps still pending after a step failed for good, with that call
# forbidden. Both ask with the plan's JSON schema (one repair), and take the deterministic
# fallback when the model's plan breaks the rules; after ``max_replans`` the plan is the one
# that calls no tools, so a run always reaches its report.


def _finished(state: ResearchState) -> dict[str, str]:
    """Ids of steps a new plan may build on, with their tools."""
    steps = state.get("steps") or {}
    return {i: s["tool"] for i, s in steps.items() if s.get("status") == "done"}


def _ask_plan(
    services: Services,
    state: ResearchState,
    messages: list[BaseMessage],
    config: RunnableConfig,
    clarify: bool = False,
) -> Structured[Plan]:
    settings = services.settings.research
    tools = step_catalog(services)
    forbidden = list(state.get("forbidden") or [])
    earlier = _finished(state)

    def validate(data: Any) -> tuple[Plan | None, list[str]]:
        plan, errors = parse_plan(data)
        if plan is None:
            return None, errors
        if clarify and wants_to_ask(plan):
            return plan, []  # the steps are planned again once the person has answered
        problems = check_plan(plan, tools, settings.max_steps, forbidden, earlier)
        return (None, problems) if problems else (plan, [])

    schema = plan_schema(tools, settings.max_steps, clarify=clarify)
    return ask_structured(services, messages, schema, validate, config)


def wants_to_ask(plan: Plan) -> bool:
    """The planner asks the person first: a question and at least two readings."""
    ask = plan.clarify
    return (
        ask is not None
        and bool(ask.question.strip())
        and len([r for r in ask.readings if r.strip()]) >= 2
    )


def _start(state: ResearchState, services: Services, config: RunnableConfig) -> ResearchUpdate:
    """What a run started from a notebook with just a question lacks."""
    if state.get("started_at"):
        return {}
    thread = (config.get("configurable") or {}).get("thread_id")
    return {
        "started_at": time.time(),
        "round": 1,
        "run_id": state.get("run_id") or thread or "",
        "max_rounds": state.get("max_rounds") or services.settings.research.max_rounds,
        "trust_urls": services.settings.tools.approval == "never",
        "model": services.model_name,
        "backend": services.backend,
    }


def _given(view: ResearchState, services: Services) -> ResearchUpdate | None:
    """The plan the person gave at the start, adopted as theirs (None: there is none, or it
    breaks the rules, which the service has already said)."""
    given = view.get("given_plan")
    if not given or view.get("order"):
        return None
    tools = step_catalog(services)
    edit = PlanEdit.model_validate(given)
    update, errors = apply_edit(view, edit, tools, services.settings.research)
    return None if errors else {**update, "reviewed": True}


def plan(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> ResearchUpdate:
    services = runtime.context.services
    settings = services.settings.research
    start = _start(state, services, config)
    view: ResearchState = {**state, **start}  # type: ignore[typeddict-item]  # the run as the planner sees it, with its start filled in
    given = _given(view, services)
    if given is not None:
        return {**start, **given}
    tools = step_catalog(services)
    gaps = list(view.get("gaps") or [])
    clarify = (
        view.get("clarify") == "auto"
        and view.get("clarification") is None
        and not gaps
        and not view.get("order")
    )
    messages = plan_messages(
        view["question"],
        tools,
        settings.max_steps,
        gaps=gaps,
        ledger=usable_ledger(view),
        done=list(_finished(view)),
        brief=person_brief(view),
        clarify=clarify,
    )
    model_skipped = gave_up(view, services)
    by_rule = bool(gaps) and hopped(view)  # the rule's hop: its plan is the rule's too
    asked = (
        skipped()
        if model_skipped or by_rule
        else _ask_plan(services, view, messages, config, clarify)
    )
    if clarify and asked.value is not None and wants_to_ask(asked.value):
        return {**start, **ask_first(view, asked.value, asked)}
    chosen = asked.value or fallback_plan(
        gaps or [answered_question(view)],
        tools,
        HOP_READS if by_rule else settings.read_top,
        view.get("forbidden") or [],
        goal=view["question"],
    )
    reason = "follow-up round" if gaps else "first plan"
    note = SKIPPED if model_skipped else None
    if by_rule:
        reason, note = "the second hop the model did not name", None
    origin = "hop" if by_rule else asked.source
    why = fallback_why(asked, origin, bool(model_skipped))
    detail = fallback_detail(asked) if why else ""
    adopted = adopt(view, chosen, origin, asked, reason, model_skipped=note, why=why, detail=detail)
    if view.get("review") and not view.get("reviewed"):
        adopted = awaiting_plan(view, adopted)  # the person sees it before the first search
    return {**start, **adopted, **remember(asked, services)}


def fallback_why(asked: Structured[Plan], origin: str, model_skipped: bool) -> str | None:
    """Why the rule's plan was used instead of the model's, in one sentence for the person
    (None: the model's plan was used); the planner's own words are :func:`fallback_detail`."""
    if origin not in ("fallback", "no-tools"):
        return None
    if model_skipped:
        return (
            "The model's plans could not be used earlier in this run, so a standard plan was "
            "used without asking it again."
        )
    if origin == "no-tools":
        return "Every search still worth trying had failed, so no other search is made."
    if not asked.attempts:
        return "The model was not asked, so a standard plan was used."
    return fallback_words(fallback_detail(asked))


def fallback_detail(asked: Structured[Plan] | None) -> str:
    """What was wrong with the model's last plan, in the planner's words ("" when the model
    was not asked): for the event log and the plan's record, not the person's sentence."""
    if asked is None or not asked.attempts:
        return ""
    errors = asked.attempts[-1].errors or asked.attempts[-1].schema_errors
    return errors[0][:200] if errors else ""


# A search no other query can cure. When a step's search failed and every provider it tried
# failed for a lasting cause (no network, a refused connection, a rejected key:
# ``ToolError.data["lasting"]``, tools/_search_failures.py), any other words would fail the
# same way, and asking the model for another plan only costs its replies (tens of seconds
# each on a small model). So ``replan`` plans only the report (with no source, the
# ``no_sources`` notice) and ``reflect`` starts no new round; failures that may pass (a
# timeout, a rate limit, a server's error) are replanned as before.


def closed_search(state: ResearchState) -> str | None:
    """The error of the run's first search that no other query can cure, or None."""
    steps = state.get("steps") or {}
    for step_id in state.get("order") or []:
        step = steps.get(step_id) or {}
        if step.get("status") != "failed" or step.get("tool") == COMPOSE:
            continue
        if any(c.get("lasting") and c.get("error") for c in step.get("calls") or []):
            return str(step.get("error") or "the search failed")
    return None


def why_closed(error: str) -> str:
    """Why no other search is planned, in the person's words."""
    said = " ".join(error.split()).rstrip(".")
    return f"The search cannot work from here ({said}), so no other search is tried."


def after_plan(state: ResearchState) -> str:
    """On to the clarifying question, the plan's review, or the first steps."""
    if state.get("decision") == "ask":
        return "ask"
    if state.get("review") and not state.get("reviewed"):
        return "review"
    return "execute"


# A question's words as a search engine is given them, not local2.retrieval's terms: as
# written (case, "C++", "node.js", "O'Brien" kept; nothing stemmed), since the engine
# tokenises them itself.
_WORD = re.compile(r"[\w'.+-]+")
# Words a search engine does without: dropped to reword a question as its keywords.
FILLER_WORDS = (
    "a an and are as at be by can could did do does for from how i in is it its me my of on "
    "or please should tell than that the their there these this to was were what when where "
    "which who whom whose why will with would you your about give find out know explain"
)
_FILLER = frozenset(FILLER_WORDS.split())


def keywords(question: str) -> str:
    """The question's content words, as a search engine takes them: another wording of the
    same search for when the question's own wording failed."""
    words = [w.strip(".'") for w in _WORD.findall(question)]
    kept = [w for w in words if w and w.lower() not in _FILLER]
    return " ".join(kept)


def _unread_results(
    state: ResearchState, reader: StepTool, forbidden: set[str], top: int
) -> list[str]:
    """Sources the ledger holds as results only, that ``reader`` can read, not read yet and
    not forbidden."""
    target = str(reader.target)
    return [
        s["url"]
        for s in state.get("ledger") or []
        if s["kind"] == "result"
        and reader.can_read(s["url"])
        and call_key(reader.name, {target: s["url"]}) not in forbidden
    ][:top]


def _replan_fallback(state: ResearchState, tools: StepTools, read_top: int) -> Plan:
    """Keep researching without what failed: read more results of the last search that
    worked; else read the results the ledger has not read; else search again with another
    wording (the question, then its keywords). Only when none of that can be called is
    this the plan that calls no tools (and the report says why)."""
    steps = state.get("steps") or {}
    goal = state.get("goal") or state["question"]
    forbidden = set(state.get("forbidden") or [])
    compose = "Write the report"
    search = tools.search()
    reader = tools.reader_for(search) if search is not None else None
    searches = [
        i
        for i in state.get("order") or []
        if search is not None and steps[i]["tool"] == search.name and steps[i]["status"] == "done"
    ]
    if searches and reader is not None:
        last = searches[-1]
        read = PlanStep(
            id="r1",
            description=f"Read more results of {last}",
            tool=reader.name,
            args={FROM_STEP: last, TOP: read_top},
            requires=[last],
        )
        done = PlanStep(id="r2", description=compose, tool=COMPOSE, requires=["r1"])
        return Plan(goal=goal, steps=[read, done])
    unread = _unread_results(state, reader, forbidden, read_top) if reader is not None else []
    if unread and reader is not None:
        reads = [
            PlanStep(
                id=f"r{n}",
                description=f"Read {label}"[:80],
                tool=reader.name,
                args={str(reader.target): label},
            )
            for n, label in enumerate(unread, start=1)
        ]
        done = PlanStep(
            id=f"r{len(reads) + 1}",
            description=compose,
            tool=COMPOSE,
            requires=[r.id for r in reads],
        )
        return Plan(goal=goal, steps=[*reads, done])
    question = answered_question(state)
    wordings = [q for q in dict.fromkeys([question, keywords(question)]) if q.strip()]
    name = search.name if search is not None else ""
    fresh = [q for q in wordings if call_key(name, {"query": q}) not in forbidden][:1]
    return fallback_plan(fresh, tools, read_top, list(forbidden), goal=state["question"])


def replan(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> ResearchUpdate:
    services = runtime.context.services
    settings = services.settings.research
    steps = state.get("steps") or {}
    handled = list(state.get("handled") or [])
    failed = [i for i in state.get("order") or [] if steps[i]["status"] == "failed"]
    fresh = [i for i in failed if i not in handled]
    reason = "; ".join(f"{i} {steps[i]['tool']}: {steps[i].get('error')}" for i in fresh)
    forbidden = list(state.get("forbidden") or [])
    replans = (state.get("replans") or 0) + 1
    noted = event(state, events.RESEARCH_REPLAN, reason=reason, forbidden=forbidden, n=replans)
    tools = step_catalog(services)
    asked: Structured[Plan] | None = None
    why: str | None = None
    if replans > settings.max_replans:
        chosen, origin = fallback_plan([], tools, settings.read_top), "no-tools"
        why = (
            f"The run had replanned {replans - 1} times, the most it may "
            "(research.max_replans), so it goes on to the report."
        )
    elif any(LIBRARY_EMPTY in str(steps[i].get("error") or "") for i in fresh):
        # the run reads only the library, and it is empty: no other search can find anything
        chosen, origin = fallback_plan([], tools, settings.read_top), "no-tools"
        why = "Your library is empty, so no other search of it can find anything."
    elif (closed := closed_search(state)) is not None:
        # no network, or every provider refused: any other words would fail the same way
        chosen = fallback_plan([], tools, settings.read_top, goal=state["question"])
        origin = "no-tools"
        why = why_closed(closed)
    else:
        observations = [
            observation(steps[i]) for i in state.get("order") or [] if steps[i]["tool"] != COMPOSE
        ]
        messages = replan_messages(
            state["question"],
            tools,
            settings.max_steps,
            observations,
            forbidden,
            brief=person_brief(state),
        )
        asked = _ask_plan(services, state, messages, config)
        if asked.value is not None:
            chosen, origin = asked.value, asked.source
        else:  # the replan broke the rules: the fallback, which leaves forbidden calls out
            chosen = _replan_fallback(state, tools, settings.read_top)
            origin = "fallback" if len(chosen.steps) > 1 else "no-tools"
            why = fallback_why(asked, origin, False)
    adopted = adopt(
        state,
        chosen,
        origin,
        asked,
        f"replan: {reason}",
        followup=_followup_n(state),
        why=why,
        detail=fallback_detail(asked) if why else "",
    )
    return {
        **adopted,
        "replans": replans,
        "handled": handled + fresh,
        "event_log": [noted, *adopted["event_log"]],
    }


def _followup_n(state: ResearchState) -> int:
    """The follow-up question being answered (0: the run's own question)."""
    return len(state.get("followups") or []) + 1 if state.get("followup") else 0
