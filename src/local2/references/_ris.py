"""A report's references as RIS, the tagged format reference managers import: a paper is
``JOUR``, a preprint ``GEN``... with ``AU`` per author (``Family, Given``), ``DA`` as
``YYYY/MM/DD/``, ``Y2`` the day a page was read, ``L1`` its open-access PDF and ``N1`` what
a reader must know (retracted, undated).

A value is one line: line breaks in a title from outside are collapsed, so it cannot start
a tag of its own.
"""

from __future__ import annotations

from local2.contracts import CitedSource
from local2.references._names import citation_keys, date_parts, read_day, record, split_name

TYPES = {
    "paper": "JOUR",
    "preprint": "GEN",
    "encyclopedia": "ENCYC",
    "news": "NEWS",
    "web": "ELEC",
    "code": "COMP",
    "document": "GEN",
}


def _line(tag: str, value: str) -> str:
    return f"{tag}  - {' '.join(value.split())}"


def _author(written: str) -> str:
    name = split_name(written)
    return name.literal or (f"{name.family}, {name.given}" if name.given else name.family)


def _date(parts: list[int]) -> str:
    # RIS's DA: YYYY/MM/DD/other, the parts not known left empty
    padded = [f"{parts[0]:04d}", *(f"{p:02d}" for p in parts[1:]), "", ""]
    return "/".join(padded[:3]) + "/"


def entry(source: CitedSource, key: str) -> str:
    """One source as one RIS record (``TY`` to ``ER``)."""
    meta = record(source)
    parts = date_parts(meta["published"])
    read = read_day(source)
    lines = [_line("TY", TYPES.get(meta["kind"], "GEN")), _line("ID", key)]
    lines += [_line("TI", source["title"])]
    lines += [_line("AU", _author(a)) for a in meta["authors"]]
    if parts:
        lines += [_line("PY", str(parts[0])), _line("DA", _date(parts))]
    tagged = [
        ("T2", meta["venue"]),
        ("DO", meta["doi"]),
        ("UR", source["url"]),
        ("L1", meta["pdf_url"]),
        ("Y2", read.replace("-", "/") if read else None),
        ("AN", f"PMID:{meta['pmid']}" if meta["pmid"] else None),
        ("N1", f"PMCID: {meta['pmcid']}" if meta["pmcid"] else None),
        ("N1", f"arXiv: {meta['arxiv_id']}" if meta["arxiv_id"] else None),
        ("N1", "Retracted" if meta["retracted"] else None),
        ("N1", None if parts else "Undated"),
    ]
    lines += [_line(tag, value) for tag, value in tagged if value]
    return "\n".join([*lines, "ER  - "]) + "\n"


def to_ris(sources: list[CitedSource]) -> str:
    """The references as a ``.ris`` file, in the report's order."""
    keys = citation_keys(sources)
    ordered = sorted(sources, key=lambda s: s["n"])
    return "\n".join(entry(s, keys[s["n"]]) for s in ordered)
