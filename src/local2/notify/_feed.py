"""A person's Atom feed of their watches' notices, written by feedgen (a maintained feed
library), for any feed reader. On a team server the surface serving it asks for the
person's token; this module only writes the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from feedgen.feed import FeedGenerator


@dataclass(frozen=True)
class FeedEntry:
    """One notice as the feed shows it: a stable id, when, what, and where to read the run."""

    entry_id: str
    title: str
    body: str
    at: float
    link: str


def atom_feed(person: str, entries: Sequence[FeedEntry], *, feed_url: str, home_url: str) -> bytes:
    """The Atom document of ``person``'s notices (newest first as given), UTF-8."""
    feed = FeedGenerator()
    feed.id(f"urn:local2:watches:{person}")
    feed.title(f"LoCAL2 watches of {person}")
    feed.author({"name": "LoCAL2"})
    feed.link(href=feed_url, rel="self")
    feed.link(href=home_url, rel="alternate")
    feed.subtitle("What changed in the questions you watch.")
    feed.generator("LoCAL2")
    newest = max((e.at for e in entries), default=0.0)
    feed.updated(datetime.fromtimestamp(newest, UTC))
    for entry in reversed(entries):  # feedgen puts each new entry first
        item = feed.add_entry()
        item.id(f"urn:local2:notice:{entry.entry_id}")
        item.title(entry.title)
        item.updated(datetime.fromtimestamp(entry.at, UTC))
        item.content(entry.body, type="text")
        item.link(href=entry.link, rel="alternate")
    document: bytes = feed.atom_str(pretty=True)
    return document
