"""The sources a run may be told to use, by name: ``--sources web,arxiv,pubmed,library``.

``web`` (the configured web search) and ``library`` (what the person kept) are the run's
own; the rest are the scholarly providers made here from their settings. Today's
``web|library|both`` still reads as before (``both`` is ``web,library``). An unknown name is
refused with the list of known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import httpx

from local2.errors import InvalidInput
from local2.tools._scholarly.arxiv import ArxivProvider
from local2.tools._scholarly.base import PagedProvider
from local2.tools._scholarly.client import SYSTEM_CLOCK, ApiClient, Clock
from local2.tools._scholarly.crossref import CrossrefProvider
from local2.tools._scholarly.openalex import OpenAlexProvider
from local2.tools._scholarly.pubmed import PubmedProvider
from local2.tools._scholarly.semantic_scholar import SemanticScholarProvider
from local2.tools._scholarly.settings import ScholarlySettings
from local2.tools._scholarly.wikipedia import WikipediaProvider

SCHOLARLY_SOURCES = ("arxiv", "pubmed", "semantic_scholar", "openalex", "crossref", "wikipedia")
RUN_SOURCES = ("web", "library")
KNOWN_SOURCES = (*RUN_SOURCES, *SCHOLARLY_SOURCES)
ALIASES = {"both": ("web", "library"), "s2": ("semantic_scholar",)}

_MAKERS: dict[str, Callable[[ApiClient, ScholarlySettings], PagedProvider]] = {
    "arxiv": lambda c, s: ArxivProvider(c, s.arxiv),
    "pubmed": lambda c, s: PubmedProvider(c, s.pubmed),
    "semantic_scholar": lambda c, s: SemanticScholarProvider(c, s.semantic_scholar),
    "openalex": lambda c, s: OpenAlexProvider(c, s.openalex),
    "crossref": lambda c, s: CrossrefProvider(c, s.crossref),
    "wikipedia": lambda c, s: WikipediaProvider(c, s.wikipedia),
}


def parse_sources(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"web, arxiv"`` (or a list) as known source names, in order, each once; an unknown
    one is refused with the known ones listed."""
    items = value.split(",") if isinstance(value, str) else [p for v in value for p in v.split(",")]
    names: list[str] = []
    for item in (i.strip().lower().replace("-", "_") for i in items):
        if not item:
            continue
        if item not in KNOWN_SOURCES and item not in ALIASES:
            raise InvalidInput(  # the known ones in the message too: an API's 422 says it alone
                f"unknown source {item!r}: the known ones are {', '.join(KNOWN_SOURCES)}",
                f"Choose among: {', '.join(KNOWN_SOURCES)} (comma-separated).",
            )
        names += ALIASES.get(item, (item,))
    if not names:
        raise InvalidInput("no source named", f"Choose among: {', '.join(KNOWN_SOURCES)}.")
    return tuple(dict.fromkeys(names))


def scholarly_provider(
    name: str,
    settings: ScholarlySettings,
    *,
    clock: Clock = SYSTEM_CLOCK,
    transport: httpx.BaseTransport | None = None,
) -> PagedProvider:
    """The provider ``name`` (one of :data:`SCHOLARLY_SOURCES`) over its settings."""
    if name not in _MAKERS:
        raise InvalidInput(
            f"unknown scholarly source {name!r}", f"Choose among: {', '.join(SCHOLARLY_SOURCES)}."
        )
    api = getattr(settings, name)
    client = ApiClient(name, name, api, settings, clock=clock, transport=transport)
    provider = _MAKERS[name](client, settings)
    client.label = provider.label
    return provider
