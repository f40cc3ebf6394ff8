"""The corpus as the web tools see it: a search provider, and ``web_fetch`` for its URLs.

With ``web.search.provider: corpus``, ``web_search`` runs BM25 over the documents at
``web.search.corpus_path`` (``tools/search/corpus.py``) and returns ``corpus://`` URLs;
``web_fetch`` serves those from the same index in this process (no connection is opened,
not even to loopback) and passes any other URL to the real fetcher, or, with
``web.offline: true``, refuses it. The result texts have the shapes of a web search and a
fetched page, so the research ledger, the
fallback quotes and the critic read them as they read the web.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from local2.documents import clean_text
from local2.errors import EvalFileError, ToolError
from local2.tools._base import ToolContext, ToolFn, ToolResult
from local2.tools._corpus.index import CorpusIndex, open_corpus
from local2.tools._corpus.urls import parse_corpus_url
from local2.tools._passages import focus
from local2.tools._search import SearchHit
from local2.tools._web_fetch import RESULT_HEAD, question_for

OFFLINE_REFUSAL = (
    "fetch error: this session reads only its corpus (web.offline: true): use a corpus:// URL "
    "from web_search's results"
)


def _opened(path: Path, opener: Callable[[Path], CorpusIndex], what: str) -> CorpusIndex:
    try:
        return opener(path)
    except EvalFileError as exc:
        raise ToolError(
            f"{what} error: the corpus cannot be read: {exc.message}", fix=exc.fix
        ) from None


class CorpusProvider:
    """BM25 over a corpus, as a search provider (``SearchProvider``)."""

    name = "corpus"

    def __init__(self, path: Path, opener: Callable[[Path], CorpusIndex] = open_corpus) -> None:
        self.path = path
        self.opener = opener

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        index = _opened(self.path, self.opener, "search")
        return [
            SearchHit(title=h.document.title, url=h.url, snippet=h.passage)
            for h in index.search(query, max_results)
        ]


class CorpusReader:
    """``web_fetch``'s body when a corpus is configured: its URLs from the corpus, others
    from ``web`` (None: refused, the session is offline)."""

    def __init__(
        self,
        path: Path,
        web: ToolFn | None,
        budget_chars: int,
        opener: Callable[[Path], CorpusIndex] = open_corpus,
    ) -> None:
        self.path = path
        self.web = web
        self.budget_chars = budget_chars
        self.opener = opener

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> str | ToolResult:
        url = args.get("url") if isinstance(args, Mapping) else None
        if not isinstance(url, str) or not url.strip():
            raise ToolError("missing url argument")
        named = parse_corpus_url(clean_text(url))
        if named is None:
            if self.web is None:
                raise ToolError(OFFLINE_REFUSAL)
            return self.web(args, ctx)
        name, doc_id = named
        index = _opened(self.path, self.opener, "fetch")
        if name != index.name:
            raise ToolError(
                f"fetch error: no corpus named '{name}' here (this session's corpus is "
                f"'{index.name}')"
            )
        doc = index.document(doc_id)
        if doc is None:
            raise ToolError(
                f"fetch failed: 404 (no document '{doc_id}' in corpus '{name}'; read a URL "
                "from web_search's results)"
            )
        first_line = doc.text.lstrip().split("\n", 1)[0].lstrip("# ").strip()
        body = doc.text if first_line == doc.title else f"{doc.title}\n\n{doc.text}"
        shown = focus(body.strip(), question_for(args, ctx), self.budget_chars)
        data = {
            "url": url,
            "final_url": index.url(doc),
            "corpus": index.name,
            "document": doc.id,
            "chars": shown.chars_total,
            "chars_shown": shown.chars_shown,
            "truncated_chars": not shown.whole,
            "passages_shown": shown.passages_shown,
            "passages_total": shown.passages_total,
            "extraction": "corpus",
        }
        return ToolResult(text=f"URL: {index.url(doc)}{RESULT_HEAD}{shown.text}", data=data)


def corpus_fetch(corpus: Path | None, offline: bool, fetch: ToolFn, budget_chars: int) -> ToolFn:
    """``web_fetch``'s body: ``fetch`` itself unless a ``corpus`` is the search provider's
    (``tools/search/corpus.py``), whose ``corpus://`` URLs it reads (and only those when
    ``offline``)."""
    if corpus is None:
        return fetch
    return CorpusReader(corpus, None if offline else fetch, budget_chars)
