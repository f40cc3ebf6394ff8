"""The web tools as the graph sees them: ``web_search`` and ``web_fetch``."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from local2.config import Settings
from local2.tools._base import Tool, configured_tool
from local2.tools._corpus import corpus_fetch
from local2.tools._fallback import EXCERPT_CHARS, SNIPPET_CHARS, cut
from local2.tools._routing import Cue, first_url
from local2.tools._search import WEB_SEARCH_TOOL, WebSearch
from local2.tools._web_fetch import WEB_FETCH_TOOL, LibraryKeeper, WebFetch
from local2.tools.search.corpus import CorpusSettings

# Margin over the tool's own timeout so its precise message wins over the graph's generic one.
TIMEOUT_MARGIN_S = 5.0


def context_tokens(settings: Settings, backend: str | None = None) -> int:
    """The chat model's context size (of ``backend``, default the configured one): what a
    fetched page's share is taken of."""
    if (backend or settings.generator.backend) == "embedded":
        return settings.embedded.n_ctx
    return settings.generator.num_ctx


# -- what a question that needs the web looks like (for models that cannot call tools) ---

_TIME_WORDS = re.compile(
    r"\b(?:today|today's|tonight|tomorrow|yesterday|latest|newest|news|breaking"
    r"|currently|nowadays|right now|as of now|up[- ]to[- ]date|weather|forecast"
    r"|prices?(?! (?:elasticity|discrimination|theory|ceiling|floor|index)\b)"
    r"|recently|recent(?! common ancestors?\b)|this (?:week|month|year|morning|weekend)"
    r"|last (?:week|month|night)|now(?! (?:known|called|named|that|part of)\b))\b",
    re.I,
)
# "current" is time-sensitive except in physics ("the electric current in a circuit").
_CURRENT = re.compile(
    r"(?<!electric )(?<!electrical )(?<!alternating )(?<!direct )(?<!ocean )\bcurrent\b"
    r"(?! (?:density|flow|flows|source|sources|divider|law|loop)\b)",
    re.I,
)
_YEAR = re.compile(r"\b(20\d\d)\b")


def is_time_sensitive(query: str, today: dt.date | None = None) -> bool:
    """Words that mean the answer depends on now, or a year at or after last year."""
    if _TIME_WORDS.search(query) or _CURRENT.search(query):
        return True
    year = (today or dt.date.today()).year
    return any(int(y) >= year - 1 for y in _YEAR.findall(query))


def _search_args(query: str, today: dt.date) -> dict[str, str] | None:
    return {"query": query} if is_time_sensitive(query, today) else None


def _fetch_args(query: str, today: dt.date) -> dict[str, str] | None:
    url = first_url(query)
    return {"url": url} if url else None


# A URL is read first (the page is what was asked about); searching is the last resort.
SEARCH_CUE = Cue(_search_args, rank=90, last_resort=True)
FETCH_CUE = Cue(_fetch_args, rank=10)

# -- what a result looks like quoted in a fallback answer ----------------------------------

_SEARCH_HIT = re.compile(
    r"^\[(\d+)\] Title: (?P<title>.*)\nSnippet: (?P<snippet>.*)\nURL: (?P<url>.*)$", re.M
)
_FETCHED = re.compile(r"\AURL: (?P<url>\S+)\s*\nExtracted text:\n(?P<text>.*)\Z", re.S)


def search_extract(call: Mapping[str, Any]) -> list[str]:
    """The hits of a search, one line each with its URL."""
    result = str(call.get("result") or "")
    hits = list(_SEARCH_HIT.finditer(result))
    if not hits:
        return []
    query = (call.get("args") or {}).get("query", "")
    canned = " (canned mock results, not a real search)" if "[Canned results" in result else ""
    lines = [f'Search results for "{query}"{canned}:']
    for m in hits:
        lines.append(f"{m.group(1)}. {m['title'].strip()} — {cut(m['snippet'], SNIPPET_CHARS)}")
        lines.append(f"   {m['url'].strip()}")
    return lines


def fetch_extract(call: Mapping[str, Any]) -> list[str]:
    """The start of the page's text, quoted, with its URL."""
    m = _FETCHED.match(str(call.get("result") or "").strip())
    if not m or not m["text"].strip():
        return []
    excerpt = cut(m["text"], EXCERPT_CHARS).replace("\n", "\n> ")
    return [f"From the page {m['url']}:", f"> {excerpt}"]


def web_tools(settings: Settings, backend: str | None = None) -> list[Tool]:
    """``web_search`` and ``web_fetch`` configured from ``settings.web``."""
    web = settings.web
    search = WebSearch(web.search)
    fetch = WebFetch(
        web.fetch,
        favor=web.fetch.extract_favor,
        num_ctx=context_tokens(settings, backend),
        documents=settings.documents,
    )
    fetch.keeper = LibraryKeeper(settings)  # what was read, kept as library.keep says
    corpus = web.search.of(CorpusSettings).corpus_path if web.search.provider == "corpus" else None
    read = corpus_fetch(corpus, web.offline, fetch, fetch.budget_chars)  # corpus:// URLs
    # Both only read, and both bring outside text into the context; web_fetch sends a
    # request to whatever URL it is given, so it is also watched for where that URL came from.
    return [
        configured_tool(
            settings,
            WEB_SEARCH_TOOL,
            search,
            web.search.timeout_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
            extract=search_extract,
            cue=SEARCH_CUE,
        ),
        configured_tool(
            settings,
            WEB_FETCH_TOOL,
            read,
            fetch.longest_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
            url_arg="url",
            extract=fetch_extract,
            cue=FETCH_CUE,
        ),
    ]
