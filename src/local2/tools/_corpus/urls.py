"""The corpus URL rule: ``corpus://<corpus name>/<document id>``.

A corpus document is named by a URL so that every part that passes URLs along (search
results, the research ledger, citations, the approval policy) carries it unchanged, and the
scheme says plainly that it is not on the web: ``web_fetch`` serves it from the corpus in
this process and never opens a connection for it. The id is percent-encoded except ``/``
(``corpus://hotpotqa-dev/Scott%20Derrickson``, ``corpus://demo/harbours/saltmere``).
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

SCHEME = "corpus"
PREFIX = f"{SCHEME}://"


def corpus_url(name: str, doc_id: str) -> str:
    """The URL of document ``doc_id`` of corpus ``name``."""
    return f"{PREFIX}{name}/{quote(doc_id, safe='/')}"


def is_corpus_url(url: str) -> bool:
    """Whether ``url`` names a corpus document (served locally, never fetched)."""
    return url.strip().lower().startswith(PREFIX)


def parse_corpus_url(url: str) -> tuple[str, str] | None:
    """``(corpus name, document id)`` of a corpus URL, or None when it is not one.

    Forgiving of how a model copies it: surrounding whitespace and a trailing full stop or
    bracket, a fragment, spaces instead of ``%20``.
    """
    url = url.strip().rstrip(".,;:!?)]}>'\"")
    if not is_corpus_url(url):
        return None
    parts = urlsplit(url)
    name = parts.netloc.lower()
    doc_id = unquote(parts.path.lstrip("/"))
    if parts.query:
        doc_id = f"{doc_id}?{unquote(parts.query)}"
    if not name or not doc_id:
        return None
    return name, doc_id
