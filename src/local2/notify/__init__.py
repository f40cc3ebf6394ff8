"""Telling a person (a part: docs/architecture.md): Apprise targets checked and shown
redacted, a notice sent with retries and a record per attempt, a person's Atom feed.
"""

from local2.notify._feed import FeedEntry, atom_feed
from local2.notify._sending import Attempt, Backoff, deliver
from local2.notify._targets import plugin_for, redacted, scrub, secrets_of, shown

__all__ = [
    "Attempt",
    "Backoff",
    "FeedEntry",
    "atom_feed",
    "deliver",
    "plugin_for",
    "redacted",
    "scrub",
    "secrets_of",
    "shown",
]
