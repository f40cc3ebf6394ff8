"""A report's references as BibTeX (biblatex's entry types and fields): a paper is an
``@article``, a preprint, an encyclopedia article, news or a web page an ``@online`` with the
day it was read (``urldate``), code ``@software``, a person's document ``@misc``.

Every value is braced and its TeX specials escaped (an address percent-encoded where it
would unbalance the braces), so a title or URL from outside cannot break the file or run a
macro. A retracted work says so in ``note`` (and ``pubstate``).
"""

from __future__ import annotations

import re

from local2.contracts import CitedSource
from local2.references._names import citation_keys, date_parts, read_day, record, split_name

ENTRY_TYPES = {
    "paper": "article",
    "preprint": "online",
    "encyclopedia": "online",
    "news": "online",
    "web": "online",
    "code": "software",
    "document": "misc",
}
_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_VERBATIM = {"{": "%7B", "}": "%7D", "\\": "%5C"}
_SPECIAL = re.compile("|".join(re.escape(c) for c in _SPECIALS))


def escape(text: str) -> str:
    """``text`` safe inside a braced BibTeX value (its whitespace collapsed)."""
    return _SPECIAL.sub(lambda m: _SPECIALS[m.group(0)], " ".join(text.split()))


def verbatim(address: str) -> str:
    """A URL or DOI for biblatex's verbatim fields (read as written, no macros): only what
    could unbalance the braces or end the value is percent-encoded."""
    return "".join(_VERBATIM.get(c, c) for c in "".join(address.split()))


def _author(written: str) -> str:
    name = split_name(written)
    if name.literal:
        return "{" + escape(name.literal) + "}"  # one body, not split at "and"
    return f"{escape(name.family)}, {escape(name.given)}" if name.given else escape(name.family)


def _fields(source: CitedSource) -> list[tuple[str, str]]:
    meta = record(source)
    parts = date_parts(meta["published"])
    container = "journaltitle" if meta["kind"] == "paper" else "organization"
    fields = [
        ("title", escape(source["title"])),
        ("author", " and ".join(_author(a) for a in meta["authors"])),
        ("date", meta["published"] or ""),
        ("year", str(parts[0]) if parts else ""),
        (container, escape(meta["venue"] or "")),
        ("doi", verbatim(meta["doi"] or "")),
        ("url", verbatim(source["url"])),
        ("urldate", read_day(source) or ""),
        ("eprint", verbatim(meta["arxiv_id"] or "")),
        ("eprinttype", "arxiv" if meta["arxiv_id"] else ""),
        ("pmid", escape(meta["pmid"] or "")),
        ("pmcid", escape(meta["pmcid"] or "")),
        ("file", verbatim(meta["pdf_url"] or "")),
        ("pubstate", "retracted" if meta["retracted"] else ""),
        ("note", "Retracted" if meta["retracted"] else ("Undated" if not parts else "")),
    ]
    return [(name, value) for name, value in fields if value]


def entry(source: CitedSource, key: str) -> str:
    """One source as one BibTeX entry."""
    kind = ENTRY_TYPES.get(record(source)["kind"], "misc")
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in _fields(source))
    return f"@{kind}{{{key},\n{body}\n}}\n"


def to_bibtex(sources: list[CitedSource]) -> str:
    """The references as a ``.bib`` file, in the report's order."""
    keys = citation_keys(sources)
    ordered = sorted(sources, key=lambda s: s["n"])
    return "\n".join(entry(s, keys[s["n"]]) for s in ordered)
