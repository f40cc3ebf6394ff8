"""What every export needs from a source's record: its record (a web hit's when it has
none), an author's name split for a style, a date's parts, and a citation key.

A record keeps each author as written ("Given Family"); styles want the family name apart.
The split is at the last word, except for a name that is a body of people ("Sleep Study
Group"), kept whole as a literal. The key is ``family + year + first title word``
(``lovelace2024sparse``), ``a``, ``b``... added in the report's order where two would be
the same, so the same sources give the same keys every time.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from local2.contracts import CitedSource, SourceMeta, web_meta

BODIES = re.compile(
    r"\b(group|consortium|collaboration|committee|society|association|team|network|"
    r"investigators|organi[sz]ation|council|institute|agency|working party|panel)\b",
    re.I,
)
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "for",
        "and",
        "to",
        "with",
        "from",
        "by",
        "at",
        "is",
        "are",
    ]
)


@dataclass(frozen=True)
class Name:
    """An author as a style wants them: ``family`` and ``given``, or a ``literal`` body."""

    family: str = ""
    given: str = ""
    literal: str = ""


def split_name(written: str) -> Name:
    """``Ada King Lovelace`` as family ``Lovelace``, given ``Ada King``; ``Curie, Marie`` as
    written the other way; a body of people (a group, a consortium) whole."""
    text = " ".join(written.split())
    if BODIES.search(text):
        return Name(literal=text)
    if "," in text:
        family, _, given = text.partition(",")
        return Name(family=family.strip(), given=given.strip())
    given, _, family = text.rpartition(" ")
    return Name(family=family, given=given) if family else Name(literal=text)


def record(source: CitedSource) -> SourceMeta:
    """The source's record, or a web page's that knows nothing (shown undated)."""
    return source.get("meta") or web_meta("web")


def date_parts(published: str | None) -> list[int]:
    """``2024-03-05`` as ``[2024, 3, 5]``; ``2024`` as ``[2024]``; none as ``[]``."""
    found = re.match(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", published or "")
    return [int(p) for p in found.groups() if p] if found else []


def read_day(source: CitedSource) -> str | None:
    """The day the source was read (a web page's "accessed"), ISO, in UTC."""
    read_at = source.get("read_at")
    if read_at is None:
        return None
    return datetime.fromtimestamp(read_at, tz=UTC).date().isoformat()


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def _key_base(source: CitedSource) -> str:
    meta = record(source)
    first = split_name(meta["authors"][0]) if meta["authors"] else None
    who = (first.family or first.literal.split()[0]) if first else ""
    if not who:
        host = (urlsplit(source["url"]).hostname or "").removeprefix("www.")
        who = host.split(".")[0]
    year = str(date_parts(meta["published"])[0]) if meta["published"] else "nd"
    words = [_ascii_word(w) for w in source["title"].split()]
    word = next((w for w in words if w and w not in STOPWORDS), "")
    return (_ascii_word(who) or "source") + year + word


def citation_keys(sources: list[CitedSource]) -> dict[int, str]:
    """Each source's key by its number ``n``: the same sources, the same keys."""
    ordered = sorted(sources, key=lambda s: s["n"])
    bases = [_key_base(s) for s in ordered]
    seen: dict[str, int] = {}
    keys: dict[int, str] = {}
    for source, base in zip(ordered, bases, strict=True):
        if bases.count(base) == 1:
            keys[source["n"]] = base
            continue
        keys[source["n"]] = base + _suffix(seen.get(base, 0))
        seen[base] = seen.get(base, 0) + 1
    return keys


def _suffix(index: int) -> str:
    # a, b, ... z, aa, ab, ...
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters
