"""``reflect``: after a round, name what is still missing as follow-up queries, or stop.

The gaps are structured output (the gaps schema, one repair; unusable output means no
gaps). A new round starts only with gaps, rounds left (``max_rounds``) and room in the
ledger (``max_sources``); otherwise the run goes on to compose.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import ValidationError

from local2 import events
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.services import Services
from local2.research.plan_schema import SEARCH, Gaps, gaps_schema
from local2.research.planner import research_tools
from local2.research.prompts import reflect_messages
from local2.research.state import ResearchState
from local2.research.structured import ask_structured


def _searched(state: ResearchState) -> set[str]:
    steps = (state.get("steps") or {}).values()
    return {
        " ".join(str(s["args"].get("query", "")).lower().split())
        for s in steps
        if s["tool"] == SEARCH
    }


def _why_stop(state: ResearchState, services: Services) -> str:
    settings = services.settings.research
    round_n = state.get("round") or 1
    if round_n >= (state.get("max_rounds") or settings.max_rounds):
        return f"round limit ({round_n}) reached"
    if len(state.get("ledger") or []) >= settings.max_sources:
        return f"source budget ({settings.max_sources}) spent"
    if settings.max_gaps == 0 or SEARCH not in research_tools(services):
        return "no way to look further"
    return ""


def reflect(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> dict[str, Any]:
    services = runtime.context.services
    settings = services.settings.research
    round_n = state.get("round") or 1
    stop = _why_stop(state, services)
    gaps: list[str] = []
    origin = "none"
    if not stop:
        searched = _searched(state)

        def validate(data: Any) -> tuple[Gaps | None, list[str]]:
            try:
                return Gaps.model_validate(data), []
            except ValidationError as exc:
                return None, [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]

        asked = ask_structured(
            services,
            reflect_messages(state["question"], state.get("ledger") or [], settings.max_gaps),
            gaps_schema(settings.max_gaps),
            validate,
            config,
        )
        origin = asked.source
        for gap in asked.value.gaps if asked.value is not None else []:
            query = " ".join(gap.query.split())
            if query and query.lower() not in searched and query not in gaps:
                gaps.append(query)
        gaps = gaps[: settings.max_gaps]
        stop = "" if gaps else "no gaps named"
    entry = event(state, events.RESEARCH_ROUND, n=round_n, gaps=gaps, stop=stop or None)
    record = {"n": round_n, "gaps": gaps, "origin": origin, "stop": stop or None}
    update: dict[str, Any] = {"rounds": [record], "event_log": [entry], "gaps": gaps}
    if gaps:
        return {**update, "round": round_n + 1, "decision": "plan"}
    return {**update, "decision": "compose"}


def after_reflect(state: ResearchState) -> str:
    return "plan" if state.get("decision") == "plan" else "compose"
