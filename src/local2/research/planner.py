"""``plan`` and ``replan``: a valid plan every time, from the model or from the fallback.

``plan`` makes the first plan, and in later rounds the plan for the gaps ``reflect`` named.
A plan the person gave is adopted as theirs, without asking the model; with ``clarify:
auto`` the first plan may instead ask the person one question (``clarify`` in the plan's
schema), and the steps are planned again with the answer (:mod:`local2.research.pauses`).
Every plan request carries what the person said (:func:`~local2.research.steering.person_brief`).
``replan`` replaces the steps still pending after a step failed for good, with that call
forbidden. Both ask with the plan's JSON schema (one repair), and take the deterministic
fallback when the model's plan breaks the rules; after ``max_replans`` the plan is the one
that calls no tools, so a run always reaches its report.
"""

from __future__ import annotations

import re
import time
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import PlanEdit
from local2.graph import Services, TurnContext, event
from local2.research._plan import (
    COMPOSE,
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
    gave_up,
    parse_plan,
    plan_schema,
    remember,
    skipped,
)
from local2.research.pauses import ask_first, awaiting_plan
from local2.research.prompts import observation, plan_messages, replan_messages
from local2.research.second_hop import hopped
from local2.research.state import ResearchState, ResearchUpdate
from local2.research.steering import answered_question, person_brief, usable_ledger
from local2.research.step_tools import FROM_STEP, TOP, StepTool, StepTools, step_catalog
from local2.tools import LIBRARY_EMPTY


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
        settings.read_top,
        view.get("forbidden") or [],
        goal=view["question"],
    )
    reason = "follow-up round" if gaps else "first plan"
    note = SKIPPED if model_skipped else None
    if by_rule:
        reason, note = "the second hop the model did not name", None
    origin = "hop" if by_rule else asked.source
    why = fallback_why(asked, origin, bool(model_skipped))
    adopted = adopt(view, chosen, origin, asked, reason, model_skipped=note, why=why)
    if view.get("review") and not view.get("reviewed"):
        adopted = awaiting_plan(view, adopted)  # the person sees it before the first search
    return {**start, **adopted, **remember(asked, services)}


def fallback_why(asked: Structured[Plan], origin: str, model_skipped: bool) -> str | None:
    """Why the rule's plan was used instead of the model's, in words for the person (None:
    the model's plan was used)."""
    if origin not in ("fallback", "no-tools"):
        return None
    if model_skipped:
        return "the model failed its plan's schema earlier in this run, so the rule plans"
    if origin == "no-tools":
        return "every search it could still try had failed"
    if not asked.attempts:
        return "the model was not asked"
    errors = asked.attempts[-1].errors or asked.attempts[-1].schema_errors
    said = f": {errors[0][:160]}" if errors else ""
    return f"the model's plan could not be used, even after one repair{said}"


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
        why = f"it had replanned {replans - 1} times (research.max_replans), the most it may"
    elif any(LIBRARY_EMPTY in str(steps[i].get("error") or "") for i in fresh):
        # the run reads only the library, and it is empty: no other search can find anything
        chosen, origin = fallback_plan([], tools, settings.read_top), "no-tools"
        why = "your library is empty, so no other search of it can find anything"
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
        state, chosen, origin, asked, f"replan: {reason}", followup=_followup_n(state), why=why
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
