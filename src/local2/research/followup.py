"""Follow-up questions on a finished report, in the run's own thread: the ledger first.

A follow-up starts the run's graph again with ``{"followup": question}``: ``triage`` asks
the model (structured, like the gaps after a round) what the run's sources do not answer.
When they answer it all, the answer is composed from them with no new search. Otherwise
only what they lack is searched (a plan made without the model: search each missing query,
read its top results; pages already read are not read again), each search shown as the
follow-up's (``research.followup``, and the steps' ``followup`` number), in one round. The
answer is verified against the ledger like the report, kept in ``followups``, and the run
ends there: its report, grade and memory are the run's own.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import Followup
from local2.graph import TurnContext, event
from local2.research._plan import adopt, ask_structured, fallback_plan, gaps_schema
from local2.research._planner import person_brief, usable_ledger
from local2.research._prompts import followup_messages
from local2.research._state import ResearchState, ResearchUpdate, Source, source_list, step_catalog
from local2.research.reflect import new_queries, read_gaps, searched
from local2.research.verify import Verified, report_markdown

FOLLOWUP_SCHEMA = "ResearchFollowup"
FOLLOWUP_DONE = "followup_done"


def route_start(state: ResearchState) -> str:
    """A follow-up on a finished report goes to ``triage``; anything else plans."""
    return "triage" if state.get("followup") and state.get("report") else "plan"


def followup_number(state: ResearchState) -> int:
    return len(state.get("followups") or []) + 1


def triage(
    state: ResearchState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> ResearchUpdate:
    """What the ledger lacks for the follow-up: search only that, or answer from it."""
    services = runtime.context.services
    settings = services.settings.research
    tools = step_catalog(services)
    question = str(state.get("followup") or "")
    n = followup_number(state)
    missing: list[str] = []
    origin = "none"
    if tools.search() is not None and settings.max_gaps > 0:
        asked = ask_structured(
            services,
            followup_messages(
                state["question"],
                question,
                usable_ledger(state),
                settings.max_gaps,
                person_brief(state),
            ),
            gaps_schema(settings.max_gaps, FOLLOWUP_SCHEMA),
            read_gaps,
            config,
        )
        origin = asked.source
        missing = new_queries(asked.value, searched(state), settings.max_gaps)
    entry = event(
        state,
        events.RESEARCH_FOLLOWUP,
        n=n,
        question=question,
        missing=missing,
        from_ledger=not missing,
        origin=origin,
    )
    round_n = (state.get("round") or 1) + 1
    # A stop the person gave the run itself does not stop its follow-ups (execute and
    # reflect look at ``followup`` first), and the run still says it was stopped.
    base: ResearchUpdate = {"round": round_n, "gaps": [], "event_log": [entry]}
    if not missing:
        return {**base, "decision": "compose"}
    view: ResearchState = {**state, "round": round_n}
    plan = fallback_plan(
        missing, tools, settings.read_top, state.get("forbidden") or [], goal=question
    )
    adopted = adopt(view, plan, "followup", None, f"follow-up {n}: what the ledger lacks", n)
    return {**base, **adopted, "event_log": [entry, *adopted["event_log"]], "decision": "execute"}


def after_triage(state: ResearchState) -> str:
    return "execute" if state.get("decision") == "execute" else "compose"


def followup_record(state: ResearchState, checked: Verified, ledger: list[Source]) -> Followup:
    """The follow-up's verified answer, what it searched and read, and what it cites."""
    n = followup_number(state)
    question = str(state.get("followup") or "")
    cited = set(checked.cited)
    references = [s for s in ledger if s["n"] in cited]
    steps = [s for s in (state.get("steps") or {}).values() if s.get("followup") == n]
    unsupported = [u.as_dict() for u in checked.unsupported]
    return {
        "n": n,
        "question": question,
        "answer": report_markdown(question, checked, references),
        "from_ledger": not steps,
        "searched": [str(s["args"]["query"]) for s in steps if "query" in s["args"]],
        "read": [f["url"] for s in steps for f in s.get("found") or [] if f["kind"] == "page"],
        "sources": source_list(references),
        "unsupported": unsupported,
        "citations": checked.citations,
    }


def after_publish(state: ResearchState) -> list[str] | str:
    """A follow-up ends at its answer, a run with no source at its notice; a run goes on to
    its grade and its memory."""
    if state.get("decision") == FOLLOWUP_DONE or state.get("no_sources"):
        return END  # a run with no source has no report to grade or remember
    return ["critique", "ingest"]
