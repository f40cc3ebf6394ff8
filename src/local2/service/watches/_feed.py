"""A person's Atom feed of their watches' notices, and the token in its address.

A feed reader cannot easily send an ``Authorization`` header, so on a server that asks for
credentials the feed's address carries a token of its own in its query
(``/watches/feed?token=<name>.<secret>``). It opens that person's feed and nothing else; a
new one (:meth:`WatchFeed.renew`) voids the old. The server keeps no access log, and this
token is never logged, put in an event, or shown in an error.

The watch store keeps no token, only a record of it: a random nonce and the SHA-256 of the
secret (``sha256:<nonce>:<hex>``), so a copy of the database (a backup, a dump, a read of the
team's Postgres) opens no one's feed. Every ``serve`` process on one Postgres checks a token
against that hash. The secret is the HMAC-SHA256 of the name and nonce under this server's
feed key (``LOCAL2_FEED_KEY``, else ``feed.key`` in the data directory, made once, 0600), so
the same address can be shown again until it is renewed without it being stored. A store of
an older LoCAL2 kept the secrets themselves: those addresses are void when it is opened (a
warning names whose), and each person's next ``GET /watches/feed/link`` makes a new one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path

from local2.config import Settings
from local2.contracts import Person
from local2.errors import InvalidInput
from local2.notify import FeedEntry, atom_feed
from local2.storage import WatchStore

FEED_PATH = "/watches/feed"
RECORD = "sha256:"  # a kept record: sha256:<nonce>:<hex digest of the secret>
KEY_ENV = "LOCAL2_FEED_KEY"
KEY_FILE = "feed.key"
log = logging.getLogger(__name__)


def digest(secret: str) -> str:
    """The hash kept of a feed secret. SHA-256 and no salt or slow hash are enough here: the
    secret is 192 bits of HMAC output, which no one can guess or search for, so a slow hash
    (scrypt, as for a person's password) would only cost every feed poll CPU for nothing."""
    return hashlib.sha256(secret.encode()).hexdigest()


def feed_key(settings: Settings) -> bytes:
    """This server's feed key: ``LOCAL2_FEED_KEY``, else the data directory's ``feed.key``
    (made the first time, readable by its owner alone; two processes making it at once
    keep the first one's)."""
    given = os.environ.get(KEY_ENV, "").strip()
    if given:
        return given.encode()
    path = Path(settings.data_dir) / KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))
        try:
            os.link(draft, path)  # atomic: fails if another process made it first
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip().encode()


class WatchFeed:
    """Feed tokens and feed documents over the watch store."""

    def __init__(self, store: WatchStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._key: bytes | None = None
        voided = store.forget_feed_secrets_unlike(RECORD)
        if voided:
            log.warning(
                "watches: the feed addresses of %s were kept unhashed by an older LoCAL2 and "
                "are void; each gets a new one from GET /watches/feed/link or the app",
                ", ".join(voided),
            )

    def _secret(self, name: str, nonce: str) -> str:
        if self._key is None:
            self._key = feed_key(self.settings)
        mac = hmac.new(self._key, f"{name}\n{nonce}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:24]).decode().rstrip("=")

    def token(self, person: Person) -> str:
        """``person``'s feed token (made the first time it is asked for)."""
        nonce = secrets.token_urlsafe(16)
        fresh = f"{RECORD}{nonce}:{digest(self._secret(person.name, nonce))}"
        _, nonce, kept = self.store.feed_secret(person.name, fresh).split(":", 2)
        secret = self._secret(person.name, nonce)
        if not hmac.compare_digest(digest(secret), kept):
            raise InvalidInput(
                "Your feed address was made by a LoCAL2 server with another feed key, so this "
                "one cannot show it again.",
                f"Give every server the same {KEY_ENV}, or make a new address with POST "
                "/watches/feed/link (the old one then stops working).",
            )
        return f"{person.name}.{secret}"

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
        if kept is None or not kept.startswith(RECORD):
            return None
        if not hmac.compare_digest(digest(secret), kept.rsplit(":", 1)[-1]):
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
