"""``reflect``: after a round, name what is still missing as follow-up queries, or stop.

The gaps are structured output (the gaps schema, one repair). The model is shown the names
the sources give that the question does not, and told to search the one a question that
only describes its subject turns on (:mod:`local2.research._prompts`); when its output is
unusable, the second hop is made by rule: those names searched with the question's relation
words. When the model names no gaps while the sources still name someone no search has
looked up, the rule makes that hop once (``rule_hop``): a small model too often takes "the
page says who" for the answer. The hop follows each of the question's chains
(:mod:`local2.research.chains`: both films of a comparison, then both directors), so after
it, while rounds are left, the rule goes on with the chains it did not finish (a subject
whose page it has only now read names its bridge only now), without asking the model again
(a reflection costs a model reply; the hop is the rule's check, not a new line of research);
when every chain is done, the run composes.
A new round starts only with gaps, rounds left (``max_rounds``) and room in the ledger
(``max_sources``); otherwise the run goes on to compose, as it does at once when the person
stopped it or when it was answering a follow-up (one round).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import ValidationError

from local2 import events
from local2.contracts import RoundRecord
from local2.graph import Services, TurnContext, event
from local2.research._plan import (
    COMPOSE,
    SKIPPED,
    Gaps,
    ask_structured,
    gaps_schema,
    gave_up,
    remember,
    skipped,
)
from local2.research._planner import closed_search, person_brief, usable_ledger
from local2.research._prompts import (
    bridge_names,
    hop_queries,
    hopped,
    reflect_messages,
    unread_names,
)
from local2.research._state import (
    ResearchState,
    ResearchUpdate,
    pages_in,
    source_budget,
    step_catalog,
)
from local2.research.chains import chain_queries

HOPS = 2  # bridge names searched by rule after a round (a failed reflection, or no gaps)
HOP_READ = "the second hop the model did not name is read"


def searched(state: ResearchState) -> set[str]:
    """Every query the run's searches have made, as a search engine compares them."""
    steps = (state.get("steps") or {}).values()
    return {
        " ".join(str(s["args"].get("query", "")).lower().split())
        for s in steps
        if "query" in s["args"] and s["tool"] != COMPOSE
    }


def read_gaps(data: Any) -> tuple[Gaps | None, list[str]]:
    """The model's gaps, or why they are not usable."""
    try:
        return Gaps.model_validate(data), []
    except ValidationError as exc:
        return None, [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]


def new_queries(gaps: Gaps | None, done: set[str], limit: int) -> list[str]:
    """The gaps' queries no search of the run has made, each once, at most ``limit``."""
    queries: list[str] = []
    for gap in gaps.gaps if gaps is not None else []:
        query = " ".join(gap.query.split())
        if query and query.lower() not in done and query not in queries:
            queries.append(query)
    return queries[:limit]


def _why_stop(state: ResearchState, services: Services) -> str:
    settings = services.settings.research
    round_n = state.get("round") or 1
    if state.get("followup"):
        return "a follow-up takes one round"
    if state.get("stopped"):
        return str(state["stopped"])
    if closed_search(state) is not None:
        return "the search cannot work from here"
    if round_n >= (state.get("max_rounds") or settings.max_rounds):
        # The rule's hop read, and no round left for its chains: what the run stops on.
        chained = hopped(state) and not gave_up(state, services)
        return HOP_READ if chained else f"round limit ({round_n}) reached"
    budget = source_budget(state, settings.max_sources)
    if pages_in(state.get("ledger") or []) >= budget:
        return f"source budget ({budget}) spent"
    if settings.max_gaps == 0 or step_catalog(services).search() is None:
        return "no way to look further"
    return ""


def reflect(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> ResearchUpdate:
    services = runtime.context.services
    settings = services.settings.research
    round_n = state.get("round") or 1
    stop = _why_stop(state, services)
    gaps: list[str] = []
    origin = "none"
    kept: ResearchUpdate = {}  # what the run remembers: a model that failed, the rule's hop
    model_skipped = None
    if not stop and hopped(state) and not gave_up(state, services):
        # After the rule's hop, by rule again and no model asked: the chains it did not
        # finish (a subject's page read only now, so its bridge is known only now).
        done = searched(state)
        chained = chain_queries(state["question"], usable_ledger(state), settings.max_gaps)
        gaps = [q for q in chained if " ".join(q.lower().split()) not in done]
        origin, stop = ("hop", "") if gaps else ("none", HOP_READ)
        kept = {"rule_hop": round_n} if gaps else {}
    elif not stop:
        ledger = usable_ledger(state)
        names = bridge_names(state["question"], ledger) + unread_names(state["question"], ledger)
        if gave_up(state, services):
            asked, model_skipped = skipped(), SKIPPED
        else:
            asked = ask_structured(
                services,
                reflect_messages(
                    state["question"], ledger, settings.max_gaps, person_brief(state), names
                ),
                gaps_schema(settings.max_gaps),
                read_gaps,
                config,
            )
            kept = remember(asked, services)
        origin = asked.source
        done = searched(state)
        gaps = new_queries(asked.value, done, settings.max_gaps)
        satisfied = asked.value is not None and not gaps
        # The second hop, by rule: the model failed its schema, or (once a run) named none.
        if asked.value is None or (satisfied and state.get("rule_hop") is None):
            gaps = hop_queries(
                state["question"], ledger, done, min(HOPS, settings.max_gaps), settings.max_gaps
            )
            if gaps and satisfied:
                origin, kept = "hop", {**kept, "rule_hop": round_n}
        stop = "" if gaps else "no gaps named"
    entry = event(
        state,
        events.RESEARCH_ROUND,
        n=round_n,
        gaps=gaps,
        stop=stop or None,
        origin=origin,
        model_skipped=model_skipped,
    )
    record: RoundRecord = {
        "n": round_n,
        "gaps": gaps,
        "origin": origin,
        "stop": stop or None,
        "model_skipped": model_skipped,
    }
    update: ResearchUpdate = {"rounds": [record], "event_log": [entry], "gaps": gaps, **kept}
    if gaps:
        return {**update, "round": round_n + 1, "decision": "plan"}
    return {**update, "decision": "compose"}


def after_reflect(state: ResearchState) -> str:
    return "plan" if state.get("decision") == "plan" else "compose"
