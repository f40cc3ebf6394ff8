"""``plan`` and ``replan``: a valid plan every time, from the model or from the fallback.

``plan`` makes the first plan, and in later rounds the plan for the gaps ``reflect`` named.
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
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.services import Services
from local2.research.plan_schema import (
    COMPOSE,
    FETCH,
    RESEARCH_TOOLS,
    SEARCH,
    Plan,
    PlanStep,
    StepArgs,
    call_key,
    check_plan,
    fallback_plan,
    parse_plan,
    plan_schema,
    renumber,
    step_args,
)
from local2.research.prompts import observation, plan_messages, replan_messages
from local2.research.state import ResearchState, StepRecord
from local2.research.structured import Structured, ask_structured


def research_tools(services: Services) -> list[str]:
    """The read-only tools a plan may use: research never causes effects."""
    return [name for name in RESEARCH_TOOLS if name in services.tools]


def _finished(state: ResearchState) -> dict[str, str]:
    """Ids of steps a new plan may build on, with their tools."""
    steps = state.get("steps") or {}
    return {i: s["tool"] for i, s in steps.items() if s.get("status") == "done"}


def _ask_plan(
    services: Services,
    state: ResearchState,
    messages: list[BaseMessage],
    config: RunnableConfig,
) -> Structured[Plan]:
    settings = services.settings.research
    tools = research_tools(services)
    forbidden = list(state.get("forbidden") or [])
    earlier = _finished(state)

    def validate(data: Any) -> tuple[Plan | None, list[str]]:
        plan, errors = parse_plan(data)
        if plan is None:
            return None, errors
        problems = check_plan(plan, tools, settings.max_steps, forbidden, earlier)
        return (None, problems) if problems else (plan, [])

    return ask_structured(
        services, messages, plan_schema(tools, settings.max_steps), validate, config
    )


def _adopt(
    state: ResearchState,
    plan: Plan,
    origin: str,
    asked: Structured[Plan] | None,
    reason: str,
) -> dict[str, Any]:
    """Replace the pending steps by ``plan``'s, renumbered after every step so far."""
    steps = state.get("steps") or {}
    order = list(state.get("order") or [])
    round_n = state.get("round") or 1
    plan = renumber(plan, start=len(order) + 1)
    dropped = {i: None for i, s in steps.items() if s.get("status") == "pending"}
    records: dict[str, Any] = dict(dropped)
    for step in plan.steps:
        records[step.id] = StepRecord(
            id=step.id,
            description=step.description,
            tool=step.tool,
            args=step_args(step),
            requires=list(step.requires),
            round=round_n,
            status="pending",
            error=None,
            calls=[],
            found=[],
            duration_s=0.0,
        )
    order = [i for i in order if i not in dropped] + [s.id for s in plan.steps]
    summary = [
        {
            "id": s.id,
            "tool": s.tool,
            "args": step_args(s),
            "description": s.description,
            "requires": s.requires,
        }
        for s in plan.steps
    ]
    entry = event(
        state, events.RESEARCH_PLAN, round=round_n, origin=origin, goal=plan.goal, steps=summary
    )
    record = {
        "round": round_n,
        "origin": origin,
        "reason": reason,
        "goal": plan.goal,
        "steps": summary,
        "attempts": asked.summary() if asked is not None else [],
    }
    return {
        "goal": state.get("goal") or plan.goal,
        "steps": records,
        "order": order,
        "plans": [record],
        "decision": "",
        "event_log": [entry],
    }


def plan(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> dict[str, Any]:
    services = runtime.context.services
    settings = services.settings.research
    start: dict[str, Any] = {}
    if not state.get("started_at"):  # a run started from a notebook with just a question
        thread = (config.get("configurable") or {}).get("thread_id")
        start = {
            "started_at": time.time(),
            "round": 1,
            "run_id": state.get("run_id") or thread or "",
            "max_rounds": state.get("max_rounds") or settings.max_rounds,
            "trust_urls": services.settings.tools.approval == "never",
            "model": services.model_name,
            "backend": services.backend,
        }
    view: ResearchState = {**state, **start}  # type: ignore[typeddict-item]  # the run as the planner sees it, with its start filled in
    tools = research_tools(services)
    gaps = list(view.get("gaps") or [])
    messages = plan_messages(
        view["question"],
        tools,
        settings.max_steps,
        gaps=gaps,
        ledger=view.get("ledger") or [],
        done=list(_finished(view)),
    )
    asked = _ask_plan(services, view, messages, config)
    chosen = asked.value or fallback_plan(
        gaps or [view["question"]],
        tools,
        settings.read_top,
        view.get("forbidden") or [],
        goal=view["question"],
    )
    reason = "follow-up round" if gaps else "first plan"
    return {**start, **_adopt(view, chosen, asked.source, asked, reason)}


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


def _unread_results(state: ResearchState, forbidden: set[str], top: int) -> list[str]:
    """URLs the ledger holds as search results only, not read yet and not forbidden."""
    return [
        s["url"]
        for s in state.get("ledger") or []
        if s["kind"] == "result" and call_key(FETCH, {"url": s["url"]}) not in forbidden
    ][:top]


def _replan_fallback(state: ResearchState, tools: list[str], read_top: int) -> Plan:
    """Keep researching without what failed: read more results of the last search that
    worked; else read the results the ledger has not read; else search again with another
    wording (the question, then its keywords). Only when none of that can be called is
    this the plan that calls no tools (and the report says why)."""
    steps = state.get("steps") or {}
    goal = state.get("goal") or state["question"]
    forbidden = set(state.get("forbidden") or [])
    compose = "Write the report"
    searches = [
        i
        for i in state.get("order") or []
        if steps[i]["tool"] == SEARCH and steps[i]["status"] == "done"
    ]
    if searches and FETCH in tools:
        last = searches[-1]
        read = PlanStep(
            id="r1",
            description=f"Read more results of {last}",
            tool=FETCH,
            args=StepArgs(from_step=last, top=read_top),
            requires=[last],
        )
        done = PlanStep(id="r2", description=compose, tool=COMPOSE, requires=["r1"])
        return Plan(goal=goal, steps=[read, done])
    unread = _unread_results(state, forbidden, read_top) if FETCH in tools else []
    if unread:
        reads = [
            PlanStep(id=f"r{n}", description=f"Read {url}"[:80], tool=FETCH, args=StepArgs(url=url))
            for n, url in enumerate(unread, start=1)
        ]
        done = PlanStep(
            id=f"r{len(reads) + 1}",
            description=compose,
            tool=COMPOSE,
            requires=[r.id for r in reads],
        )
        return Plan(goal=goal, steps=[*reads, done])
    question = state["question"]
    wordings = [q for q in dict.fromkeys([question, keywords(question)]) if q.strip()]
    fresh = [q for q in wordings if call_key(SEARCH, {"query": q}) not in forbidden][:1]
    return fallback_plan(fresh, tools, read_top, list(forbidden), goal=question)


def replan(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> dict[str, Any]:
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
    tools = research_tools(services)
    asked: Structured[Plan] | None = None
    if replans > settings.max_replans:
        chosen, origin = fallback_plan([], tools, settings.read_top), "no-tools"
    else:
        observations = [
            observation(dict(steps[i]))
            for i in state.get("order") or []
            if steps[i]["tool"] != COMPOSE
        ]
        messages = replan_messages(
            state["question"], tools, settings.max_steps, observations, forbidden
        )
        asked = _ask_plan(services, state, messages, config)
        if asked.value is not None:
            chosen, origin = asked.value, asked.source
        else:  # the replan broke the rules: the fallback, which leaves forbidden calls out
            chosen = _replan_fallback(state, tools, settings.read_top)
            origin = "fallback" if len(chosen.steps) > 1 else "no-tools"
    adopted = _adopt(state, chosen, origin, asked, f"replan: {reason}")
    return {
        **adopted,
        "replans": replans,
        "handled": handled + fresh,
        "event_log": [noted, *adopted["event_log"]],
    }
