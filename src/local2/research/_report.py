"""The end of a round and of a run: ``reflect`` (what is still missing, or stop), follow-up
questions on a finished report, ``compose``, ``verify`` and ``publish`` with the chat
graph's ``critique`` and ``ingest``, a run that gathered no usable source, and the payload
that says everything about a run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.runtime import Runtime
from pydantic import ValidationError

from local2 import events
from local2.contracts import (
    LOCAL_NAME,
    WEB_FETCH,
    WEB_SEARCH,
    Followup,
    NoSources,
    ResearchPayload,
    ResearchStep,
    RoundRecord,
    RunStatus,
    ToolCallRecord,
)
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
from local2.research._plan import (
    COMPOSE,
    SKIPPED,
    Gaps,
    adopt,
    ask_structured,
    fallback_plan,
    gaps_schema,
    gave_up,
    remember,
    skipped,
)
from local2.research._planner import (
    closed_search,
    inbox_of,
    notes_only,
    person_brief,
    usable_ledger,
)
from local2.research._prompts import (
    bridge_names,
    compose_messages,
    followup_compose_messages,
    followup_messages,
    hop_queries,
    hopped,
    reflect_messages,
    unread_names,
)
from local2.research._state import (
    ResearchState,
    ResearchUpdate,
    Source,
    StepRecord,
    pages_in,
    source_budget,
    source_list,
    step_catalog,
)
from local2.research._verify import Verified, plain, report_markdown, verify
from local2.research.chains import chain_queries
from local2.tools import BAD_REPLY, HTTP_STATUS, LIBRARY_EMPTY, NO_NETWORK, TIMEOUT

# --- reflect ----------------------------------------------------------------------------
# ``reflect``: after a round, name what is still missing as follow-up queries, or stop.
#
# The gaps are structured output (the gaps schema, one repair). The model is shown the names
# the sources give that the question does not, and told to search the one a question that
# only describes its subject turns on (:mod:`local2.research._prompts`); when its output is
# unusable, the second hop is made by rule: those names searched with the question's relation
# words. When the model names no gaps while the sources still name someone no search has
# looked up, the rule makes that hop once (``rule_hop``): a small model too often takes "the
# page says who" for the answer. The hop follows each of the question's chains
# (:mod:`local2.research.chains`: both films of a comparison, then both directors), so after
# it, while rounds are left, the rule goes on with the chains it did not finish (a subject
# whose page it has only now read names its bridge only now), without asking the model again
# (a reflection costs a model reply; the hop is the rule's check, not a new line of research);
# when every chain is done, the run composes.
# A new round starts only with gaps, rounds left (``max_rounds``) and room in the ledger
# (``max_sources``); otherwise the run goes on to compose, as it does at once when the person
# stopped it or when it was answering a follow-up (one round).

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


# --- followup ---------------------------------------------------------------------------
# Follow-up questions on a finished report, in the run's own thread: the ledger first.
#
# A follow-up starts the run's graph again with ``{"followup": question}``: ``triage`` asks
# the model (structured, like the gaps after a round) what the run's sources do not answer.
# When they answer it all, the answer is composed from them with no new search. Otherwise
# only what they lack is searched (a plan made without the model: search each missing query,
# read its top results; pages already read are not read again), each search shown as the
# follow-up's (``research.followup``, and the steps' ``followup`` number), in one round. The
# answer is verified against the ledger like the report, kept in ``followups``, and the run
# ends there: its report, grade and memory are the run's own.

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


# --- no_sources -------------------------------------------------------------------------
# A run that gathered no usable source ends ``no_sources``: no report is written from nothing.
#
# Instead of asking a model to write without sources (it invents), the run says what it tried
# and the one next step that fits why nothing was found (docs/research.md): no network (read your
# library, or search documents on disk with the ``corpus`` provider), an empty library (read
# on the web first, or import a library), a provider that refused (which key or setting to
# check), and so on. The cause is the one a failed search names (``ToolError.data["cause"]``,
# kept on its call's record), or else read off the step's error as its tool worded it; the raw
# detail stays in the event log.

NO_REPORT = "No report: no source could be gathered, so nothing was written."
_REFUSED = re.compile(
    r"\b(401|402|403|429)\b|unauthori[sz]ed|forbidden|api[ _]key|rate.?limit|quota|refused json",
    re.IGNORECASE,
)
_NETWORK = re.compile(
    r"connect|unreachable|network|dns|resolv|name or service|getaddrinfo|os error|"
    r"cannot reach|could not reach|offline|no route",
    re.IGNORECASE,
)
_TIMEOUT = re.compile(r"timeout|timed out", re.IGNORECASE)
_NO_RESULTS = re.compile(r"^no results\b|no results found|nothing in your library", re.IGNORECASE)
_URL = re.compile(r"\S+://\S+")
# a search's cause as a kind: an error status or an unreadable answer is a provider that
# failed; every other cause (a refused connection, a rejected key, a rate limit, a missing
# package or key) is a provider that refused
_BY_CAUSE = {
    NO_NETWORK: "no_network",
    TIMEOUT: "timeout",
    HTTP_STATUS: "failed",
    BAD_REPLY: "failed",
}
_KEYS = (
    ("tavily", "TAVILY_API_KEY"),
    ("brave", "BRAVE_API_KEY"),
)

OUTCOMES = {
    "empty_library": "your library is empty",
    "refused": "refused",
    "no_network": "no network",
    "timeout": "no answer in time",
    "nothing_found": "nothing found",
}
LIBRARY = '"My library only" in the app, `local2 research --sources library` at the terminal'
WEB = '"The web" in the app, `local2 research --sources web` at the terminal'
NEXT_STEPS = {
    "no_network": (
        "This machine could not reach the web. Research your library instead ("
        + LIBRARY
        + "), or search documents on disk with the offline `corpus` provider: set "
        "`search.provider: corpus` and `corpus_path` in web.yaml, in your config directory "
        "(`--config DIR` or LOCAL2_CONFIG; docs/configuration.md)."
    ),
    "empty_library": (
        "Your library is empty, so there was nothing to search. Research on the web first ("
        + WEB
        + "): what a run reads is kept there. Or import a library export: "
        "`local2 library import FILE.zip`."
    ),
    "library_nothing": (
        "Nothing in your library matches this question. Research it on the web ("
        + WEB
        + ', or "Both"), or ask it in the words of the pages you kept.'
    ),
    "timeout": (
        "The search did not answer in time. Try again in a moment, or give it longer "
        "(`search.timeout_s` in web.yaml); `local2 doctor` tries a search."
    ),
    "nothing_found": (
        "The searches answered but found nothing. Ask the question in other words, "
        "or with fewer of them."
    ),
    "no_tools": (
        "No tool that searches or reads was available to the run. Turn web search on "
        "(tools.yaml) or research your library (" + LIBRARY + ")."
    ),
    "dropped": (
        "Every source found was in a sub-question you dropped. Research it again, keeping "
        "the sub-questions you want read."
    ),
    "failed": (
        "Every search and read failed. `local2 doctor` checks the search; the event log "
        "has each error in full."
    ),
}


def step_outcome(step: StepRecord) -> tuple[str, str]:
    """A failed step as one kind and the fix its tool named: from the cause a failed search
    names (``ToolError.data["cause"]``, tools/_search_failures.py) where its call has one, else
    from its error's words (a read, an empty library, a tool from before causes)."""
    for call in reversed(step.get("calls") or []):
        cause = call.get("cause")
        if cause and call.get("error"):
            return (_BY_CAUSE.get(cause, "refused"), call.get("fix") or "")
    return outcome(step.get("error")), ""


def outcome(error: str | None) -> str:
    """A step's error as one kind: empty_library, refused, no_network, timeout,
    nothing_found, or failed (none of those)."""
    text = error or ""
    if LIBRARY_EMPTY.lower() in text.lower():
        return "empty_library"
    for kind, pattern in (
        ("refused", _REFUSED),
        ("no_network", _NETWORK),
        ("timeout", _TIMEOUT),
        ("nothing_found", _NO_RESULTS),
    ):
        if pattern.search(text):
            return kind
    return "failed"


def refused_step(errors: list[str]) -> str:
    """Which key or setting to check when a provider refused."""
    said = " ".join(errors)
    for name, key in _KEYS:
        if name in said.lower() or key in said:
            return (
                f"The {name.title()} search refused the request. Check {key} (is it set, and "
                "still valid?), or set another provider (`search.provider` in web.yaml); "
                "`local2 doctor` tries a search."
            )
    if "429" in said or re.search(r"rate.?limit|quota", said, re.IGNORECASE):
        return (
            "The search provider turned the run away for asking too often. Wait a minute and "
            "try again, or set another provider (`search.provider` in web.yaml)."
        )
    if "searxng" in said.lower():
        return (
            "SearXNG refused the request. Check `searxng_url` in web.yaml, and that its "
            "settings.yml allows `json` under `search.formats`; `local2 doctor` tries a search."
        )
    return (
        "The search provider refused the request. Check its key or setting "
        "(`search.provider` in web.yaml; TAVILY_API_KEY, BRAVE_API_KEY); "
        "`local2 doctor` tries a search."
    )


def _tried_line(step: StepRecord, library: bool) -> str:
    """One step tried, in words: what it looked for and how that ended."""
    args: Mapping[str, Any] = step.get("args") or {}
    tool = step.get("tool") or ""
    query = args.get("query")
    if isinstance(query, str) and query.strip():
        where = "your library" if library else ("the web" if tool == WEB_SEARCH else tool)
        what = f'searched {where} for "{_one_line(query)}"'
    else:
        target = next((str(v) for k, v in args.items() if k in ("url", "path")), "")
        what = f"read {_one_line(target)}" if target else f"{tool} ({str(dict(args))[:80]})"
    if step.get("status") != "failed":
        return f"{what}: nothing usable"
    kind, _fix = step_outcome(step)
    error = str(step.get("error") or "")
    if kind != "empty_library" and any(c.get("cause") for c in step.get("calls") or []):
        return f"{what}: {_one_line(error)}"  # a search's failure, in the person's words
    said = OUTCOMES.get(kind) or _one_line(_URL.sub("…", error))[:120]
    return f"{what}: {said}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cause(kinds: list[str], library: bool, ledger: bool) -> str:
    """The run's cause, from its steps' outcomes (the one a next step can fix first)."""
    if not kinds:
        return "dropped" if ledger else "no_tools"
    for kind in ("empty_library", "refused", "no_network", "timeout"):
        if kind in kinds:
            return kind
    if all(k == "nothing_found" for k in kinds):
        return "library_nothing" if library else "nothing_found"
    return "dropped" if ledger else "failed"


def no_sources(state: ResearchState) -> NoSources:
    """What the run tried (plain text, for the payload) and the next step, for a run that
    ends with no usable source."""
    steps = state.get("steps") or {}
    library = state.get("looks_in") == "library"
    tried = [
        steps[i]
        for i in state.get("order") or []
        if i in steps and steps[i].get("tool") != COMPOSE and steps[i].get("status") != "pending"
    ]
    ran = [s for s in tried if s.get("status") != "skipped"]
    outcomes = [step_outcome(s) for s in ran if s.get("status") == "failed"]
    kinds = [kind for kind, _fix in outcomes]
    if ran and not kinds:
        kinds = ["nothing_found"]  # they ran and found nothing they could file
    cause = _cause(kinds, library, bool(state.get("ledger")))
    fixes = [fix for kind, fix in outcomes if kind == cause and fix]
    if cause == "refused" and not fixes:
        step = refused_step([str(s.get("error") or "") for s in ran])
    elif cause in ("refused", "failed") and fixes:
        step = fixes[-1]  # the fix the provider's own failure named (a key, a setting)
    else:
        step = NEXT_STEPS[cause]
    return {
        "cause": cause,
        "tried": list(dict.fromkeys(_tried_line(s, library) for s in ran)),
        "next_step": step,
    }


def no_sources_markdown(question: str, found: NoSources) -> str:
    """What a run with no usable source shows in its report's place: the question, that no
    report was written, what was tried and the next step (no model text)."""
    parts = [f"# {question.strip()}", f"**{NO_REPORT}**"]
    if found["tried"]:
        tried = "\n".join(f"- {plain(t)}" for t in found["tried"])  # untrusted: queries, URLs
        parts.append(f"What was tried:\n\n{tried}")
    parts.append(f"**Next step:** {found['next_step']}")
    return "\n\n".join(parts) + "\n"


# --- payload ----------------------------------------------------------------------------
# The research payload: one dict that says everything about a run (CLI ``--json``, API, app).

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


# --- report -----------------------------------------------------------------------------
# ``compose``, ``verify`` and ``publish``; then the chat graph's ``critique`` and ``ingest``.
#
# ``compose`` asks for the report over the ledger's numbered sources (those of dropped
# sub-questions left out), within the model's context, with what the person said; ``verify``
# keeps what the sources support and appends the references built from the ledger;
# ``publish`` announces the payload. A follow-up goes the same way to its own answer
# (:mod:`local2.research._report`). Grading and remembering reuse the chat
# graph's nodes on a turn-shaped view of the run, so both behave exactly as for a chat turn.

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
