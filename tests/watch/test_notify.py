"""Notices through Apprise to real servers on loopback (an SMTP server, aiosmtpd; a webhook,
http.server): checked URLs, retries with backoff and a record per attempt, secrets in no log;
and the person's Atom feed, read back by a feed reader's parser."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import feedparser
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from local2.errors import InvalidInput
from local2.notify import Attempt, Backoff, FeedEntry, atom_feed, deliver, plugin_for, redacted
from local2.ports import free_port
from local2.storage import SqliteWatchStore
from local2.watch import DueRun, new_watch, tell

SECRET = "hunter2-s3cret"
# The loopback SMTP server takes a login without TLS (aiosmtpd warns of it; nothing leaves).
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
FAST = Backoff(attempts=4, first_wait_s=0.05, max_wait_s=1.0)


class Mailbox:
    """What the SMTP server received, and the logins it saw."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.logins: list[tuple[str, str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        login, password = data.login.decode(), data.password.decode()
        self.logins.append((login, password))
        return AuthResult(success=password == SECRET, handled=False)  # aiosmtpd answers 535


@pytest.fixture
def smtp() -> Iterator[tuple[int, Mailbox]]:
    box = Mailbox()
    port = free_port()
    server = Controller(
        box, hostname="127.0.0.1", port=port, authenticator=box.authenticate,
        auth_require_tls=False, auth_required=True,
    )  # fmt: skip
    server.start()
    yield port, box
    server.stop()


class Hook:
    """A webhook on loopback that refuses the first ``failures`` posts with a 500."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.bodies: list[dict[str, Any]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.bodies.append(json.loads(body))
                refuse = len(hook.bodies) <= hook.failures
                self.send_response(500 if refuse else 200)
                self.end_headers()
                self.wfile.write(b"busy" if refuse else b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self) -> str:
        return f"json://local2:{SECRET}@127.0.0.1:{self.port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def flaky_hook() -> Iterator[Hook]:
    hook = Hook(failures=2)
    yield hook
    hook.close()


def mail_url(port: int, password: str = SECRET) -> str:
    return (
        f"mailto://alice:{password}@example.com?smtp=127.0.0.1&port={port}"
        "&to=alice@example.com&from=local2@example.com"
    )


def test_an_apprise_url_is_checked_when_given_and_shown_redacted() -> None:
    with pytest.raises(InvalidInput) as unknown:
        plugin_for("carrierpigeon://loft/7")
    assert "unknown scheme carrierpigeon://" in unknown.value.message
    assert "mailto://" in unknown.value.fix and "json://" in unknown.value.fix
    with pytest.raises(InvalidInput) as malformed:
        plugin_for("mailto://")
    assert "malformed" in malformed.value.message
    with pytest.raises(InvalidInput, match="no scheme"):
        plugin_for("alice@example.com")
    shown = redacted(f"json://local2:{SECRET}@127.0.0.1:9/hook")
    assert SECRET not in shown and shown.startswith("json://local2:")


def test_email_goes_through_a_real_smtp_server_with_a_login(smtp: tuple[int, Mailbox]) -> None:
    port, box = smtp
    attempts: list[Attempt] = []
    assert deliver(
        mail_url(port), "Kestrel: 1 new source", "New sources:\n- x", on_attempt=attempts.append
    )
    [(to, message)] = box.messages
    assert to == ["alice@example.com"]
    assert message["Subject"] == "Kestrel: 1 new source"
    texts = [
        part.get_payload(decode=True).decode()
        for part in message.walk()
        if part.get_content_type() == "text/plain"
    ]
    assert any("New sources:\n- x" in text.replace("\r\n", "\n") for text in texts), texts
    assert box.logins and box.logins[-1][1] == SECRET
    assert [(a.attempt, a.ok) for a in attempts] == [(1, True)]
    assert SECRET not in attempts[0].target


def test_a_delivery_that_fails_twice_is_retried_with_backoff_and_every_attempt_recorded(
    flaky_hook: Hook,
) -> None:
    attempts: list[Attempt] = []
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    went = deliver(
        flaky_hook.url(), "t", "b", backoff=FAST, on_attempt=attempts.append, sleep=sleep
    )
    assert went
    assert [(a.attempt, a.ok) for a in attempts] == [(1, False), (2, False), (3, True)]
    assert all(a.error for a in attempts[:2]) and attempts[2].error is None
    assert len(flaky_hook.bodies) == 3 and flaky_hook.bodies[-1]["title"] == "t"
    assert len(waits) == 2 and waits[1] > waits[0] > 0


def test_a_delivery_that_never_goes_ends_quietly_after_its_attempts(
    smtp: tuple[int, Mailbox],
) -> None:
    port, box = smtp
    closed = free_port()
    attempts: list[Attempt] = []
    two = Backoff(attempts=2, first_wait_s=0.01)
    assert not deliver(
        f"json://127.0.0.1:{closed}/x", "t", "b", backoff=two, on_attempt=attempts.append
    )
    assert not deliver(
        mail_url(port, "wrong-pass"), "t", "b", backoff=two, on_attempt=attempts.append
    )
    assert [a.ok for a in attempts] == [False] * 4 and box.messages == []
    assert all(a.error for a in attempts)


def test_no_secret_reaches_a_log_or_a_record(
    caplog: pytest.LogCaptureFixture, smtp: tuple[int, Mailbox], flaky_hook: Hook
) -> None:
    port, _ = smtp
    attempts: list[Attempt] = []
    caplog.set_level(logging.DEBUG)
    deliver(flaky_hook.url(), "t", "b", backoff=FAST, on_attempt=attempts.append)
    deliver(
        mail_url(port, SECRET + "x"),
        "t",
        "b",
        backoff=Backoff(attempts=2, first_wait_s=0.01),
        on_attempt=attempts.append,
    )
    with pytest.raises(InvalidInput) as refused:
        plugin_for(f"nosuch://u:{SECRET}@host")
    assert caplog.records, "the sends were logged at all"
    assert SECRET not in caplog.text
    assert all(SECRET not in f"{a.target} {a.error}" for a in attempts)
    assert SECRET not in f"{refused.value.message} {refused.value.fix}"


def test_the_atom_feed_reads_back_in_a_feed_readers_parser() -> None:
    entries = [
        FeedEntry("w-1-200", "Kestrel: 1 new source", "New sources:\n- Battery news <x>", 200.0, "http://127.0.0.1:8000/research/w-1-200"),
        FeedEntry("w-1-100", "Kestrel: first run", "2 new sources", 100.0, "http://127.0.0.1:8000/research/w-1-100"),
    ]  # fmt: skip
    document = atom_feed(
        "alice",
        entries,
        feed_url="http://127.0.0.1:8000/watches/feed",
        home_url="http://127.0.0.1:8000/",
    )
    feed = feedparser.parse(document)
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10"
    assert feed.feed.title == "LoCAL2 watches of alice"
    assert [e.id for e in feed.entries] == [
        "urn:local2:notice:w-1-200",
        "urn:local2:notice:w-1-100",
    ]
    assert [e.title for e in feed.entries] == ["Kestrel: 1 new source", "Kestrel: first run"]
    assert feed.entries[0].link == "http://127.0.0.1:8000/research/w-1-200"
    assert feed.entries[0].content[0].value == "New sources:\n- Battery news <x>"
    assert feed.entries[1].updated_parsed[:6] == (1970, 1, 1, 0, 1, 40)
    empty = feedparser.parse(atom_feed("bob", [], feed_url="http://h/f", home_url="http://h/"))
    assert not empty.bozo and empty.entries == []


CHANGED: Any = {
    "first_run": False, "nothing_new": False,
    "new_sources": [{"url": "https://a.example/x", "title": "A"}], "sources_gone": [],
    "new_claims": [], "revised_claims": [], "no_longer_supported": [],
}  # fmt: skip


def test_a_run_is_told_once_even_when_taken_over(
    tmp_path: Path, smtp: tuple[int, Mailbox], flaky_hook: Hook
) -> None:
    port, box = smtp
    store = SqliteWatchStore(tmp_path / "watches.sqlite")
    row = new_watch(
        "alice", "Kestrel?", "every day at 07:00", "UTC", targets=[mail_url(port), flaky_hook.url()]
    )
    store.add(row)
    claim = DueRun(row, 1000.0, f"{row['watch_id']}-1000", 1, None)
    notice = tell(store, claim, CHANGED, link="http://127.0.0.1/r", backoff=FAST)
    assert notice is not None and notice["title"] == "Kestrel?: 1 new source"
    tell(
        store,
        DueRun(row, 1000.0, claim.run_id, 2, None),
        CHANGED,
        link="http://127.0.0.1/r",
        backoff=FAST,
    )
    assert len(box.messages) == 1 and len(flaky_hook.bodies) == 3
    records = store.deliveries(row["watch_id"])
    assert sorted((r["target"].split(":")[0], r["attempt"], r["ok"]) for r in records) == [
        ("json", 1, False), ("json", 2, False), ("json", 3, True), ("mailto", 1, True),
    ]  # fmt: skip
    assert all(SECRET not in r["target"] for r in records)
    assert [n["notice_id"] for n in store.notices("alice")] == [claim.run_id]
    assert store.notices("bob") == []
    quiet = {**CHANGED, "nothing_new": True, "new_sources": []}
    assert tell(store, DueRun(row, 2000.0, "r2", 1, None), quiet, link="x") is None
    assert len(box.messages) == 1
    store.close()
