"""A person's Atom feed of their watches' notices, and the token in its address.

A feed reader cannot easily send an ``Authorization`` header, so on a server that asks for
credentials the feed's address carries a token of its own in its query
(``/watches/feed?token=<name>.<secret>``). It opens that person's feed and nothing else; a
new one (:meth:`WatchFeed.renew`) voids the old. The secret is kept in the watch store, so
every ``serve`` process on one Postgres accepts it. The server keeps no access log, and
this token is never logged, put in an event, or shown in an error.
"""

from __future__ import annotations

import hmac
import secrets

from local2.config import Settings
from local2.contracts import Person
from local2.notify import FeedEntry, atom_feed
from local2.storage import WatchStore

FEED_PATH = "/watches/feed"


class WatchFeed:
    """Feed tokens and feed documents over the watch store."""

    def __init__(self, store: WatchStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    def token(self, person: Person) -> str:
        """``person``'s feed token (made the first time it is asked for)."""
        return f"{person.name}.{self.store.feed_secret(person.name, secrets.token_urlsafe(24))}"

    def renew(self, person: Person) -> str:
        """A new feed token; the old one opens nothing from now on."""
        self.store.forget_feed_secret(person.name)
        return self.token(person)

    def holder(self, token: str) -> str | None:
        """The name whose feed ``token`` opens, or None (malformed, unknown or voided)."""
        name, dot, secret = (token or "").strip().rpartition(".")
        if not dot or not name or not secret:
            return None
        kept = self.store.kept_feed_secret(name)
        if kept is None or not hmac.compare_digest(kept.encode(), secret.encode()):
            return None
        return name

    def document(self, person: Person, *, base_url: str, limit: int = 50) -> bytes:
        """The Atom document of ``person``'s newest notices. ``base_url``: the server as the
        reader reached it (``watch.link_base`` when set); the feed's own link names no token."""
        base = (self.settings.watch.link_base or base_url).rstrip("/")
        entries = [
            FeedEntry(
                entry_id=n["notice_id"],
                title=n["title"],
                body=n["body"],
                at=n["created_at"],
                link=f"{base}/research/{n['run_id']}",
            )
            for n in self.store.notices(person.name, limit)
        ]
        return atom_feed(person.name, entries, feed_url=f"{base}{FEED_PATH}", home_url=f"{base}/")
