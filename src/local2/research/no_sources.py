"""A run that gathered no usable source ends ``no_sources``: no report is written from nothing.

Instead of asking a model to write without sources (it invents), the run says what it tried
and the one next step that fits why nothing was found (docs/research.md): no network (read your
library, or search documents on disk with the ``corpus`` provider), an empty library (read
on the web first, or import a library), a provider that refused (which key or setting to
check), and so on. The cause is the one a failed search names (``ToolError.data["cause"]``,
kept on its call's record), or else read off the step's error as its tool worded it; the raw
detail stays in the event log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from local2.contracts import WEB_SEARCH, NoSources
from local2.research._plan import COMPOSE
from local2.research._state import ResearchState, StepRecord
from local2.research.verify import plain
from local2.tools import BAD_REPLY, HTTP_STATUS, LIBRARY_EMPTY, NO_NETWORK, TIMEOUT

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
    names (``ToolError.data["cause"]``, tools/search_failures.py) where its call has one, else
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
