"""A report's references as CSL-JSON, what citeproc processors (Pandoc, Zotero) read to
format them in any style: ``id`` the citation key, names split into ``family``/``given``
(a body of people as ``literal``), dates as ``date-parts``, ``accessed`` the day a page was
read, ``status: retracted`` for a retracted work.
"""

from __future__ import annotations

import json
from typing import Any

from local2.contracts import CitedSource
from local2.references._names import citation_keys, date_parts, read_day, record, split_name

TYPES = {
    "paper": "article-journal",
    "preprint": "article",
    "encyclopedia": "entry-encyclopedia",
    "news": "article-newspaper",
    "web": "webpage",
    "code": "software",
    "document": "document",
}


def _name(written: str) -> dict[str, str]:
    name = split_name(written)
    if name.literal:
        return {"literal": name.literal}
    return {"family": name.family, "given": name.given} if name.given else {"family": name.family}


# a CSL-JSON item: citeproc's schema, an outside format handed on as JSON
def item(source: CitedSource, key: str) -> dict[str, Any]:
    """One source as one CSL-JSON item (the fields it knows, nothing guessed)."""
    meta = record(source)
    parts = date_parts(meta["published"])
    read = read_day(source)
    # a CSL-JSON item: citeproc's schema, an outside format handed on as JSON
    found: dict[str, Any] = {
        "id": key,
        "type": TYPES.get(meta["kind"], "document"),
        "title": " ".join(source["title"].split()),
        "author": [_name(a) for a in meta["authors"]],
        "issued": {"date-parts": [parts]} if parts else None,
        "container-title": meta["venue"],
        "DOI": meta["doi"],
        "URL": source["url"],
        "PMID": meta["pmid"],
        "PMCID": meta["pmcid"],
        "number": f"arXiv:{meta['arxiv_id']}" if meta["arxiv_id"] else None,
        "accessed": {"date-parts": [date_parts(read)]} if read else None,
        "status": "retracted" if meta["retracted"] else None,
        "note": None if parts else "Undated",
    }
    return {k: v for k, v in found.items() if v}


# a CSL-JSON item: citeproc's schema, an outside format handed on as JSON
def to_csl(sources: list[CitedSource]) -> list[dict[str, Any]]:
    """The references as CSL-JSON items, in the report's order."""
    keys = citation_keys(sources)
    return [item(s, keys[s["n"]]) for s in sorted(sources, key=lambda s: s["n"])]


def to_csl_json(sources: list[CitedSource]) -> str:
    """:func:`to_csl` as the text of a ``.json`` file."""
    return json.dumps(to_csl(sources), ensure_ascii=False, indent=2) + "\n"
