"""Sending one notice to one Apprise target: retried with backoff, every attempt recorded,
never raising into the scheduler.

Apprise's own retry (``?retry=N``, new in 1.11) retries inside one ``notify()`` call and
says only "sent" or "not" at the end; the watch shows each attempt, so the attempts are
tenacity's, with Apprise's retry left at its default of none. What a failed attempt keeps
is Apprise's warning for it (caught on this thread only), with the URL's secrets masked.
A notice is plain text, said so to Apprise (``body_format``): an email's text part keeps its
lines (left unsaid, Apprise read it as HTML and joined them).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from apprise import NotifyFormat
from apprise.plugins import NotifyBase
from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_attempt, wait_exponential

from local2.errors import InvalidInput
from local2.notify._targets import plugin_for, scrub, secrets_of, shown

log = logging.getLogger(__name__)
APPRISE_LOGGER = "apprise"


@dataclass(frozen=True)
class Attempt:
    """One try to send: to which target (redacted), the how-manieth, whether it went, why not."""

    target: str
    attempt: int
    ok: bool
    error: str | None
    at: float


@dataclass(frozen=True)
class Backoff:
    """How often to try and how long to wait between tries (doubling, up to ``max_wait_s``)."""

    attempts: int = 4
    first_wait_s: float = 2.0
    max_wait_s: float = 120.0


class _ThreadWarnings(logging.Handler):
    """Apprise's warnings and errors logged on one thread (a send's own reasons)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.lines.append(record.getMessage())


def deliver(
    url: str,
    title: str,
    body: str,
    *,
    backoff: Backoff | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Send ``title``/``body`` to ``url`` until it goes or the tries run out; whether it
    went. Each attempt is handed to ``on_attempt`` (a delivery record). Never raises."""
    policy = backoff or Backoff()
    try:
        plugin = plugin_for(url)
        secrets = secrets_of(url)
    except InvalidInput as exc:  # checked when the watch was added; Apprise may have changed
        _tell(on_attempt, Attempt("(unusable target)", 1, False, exc.message, time.time()))
        return False
    target = shown(plugin)
    count = 0

    def once() -> bool:
        nonlocal count
        count += 1
        ok, error = _send(plugin, title, body)
        _tell(
            on_attempt,
            Attempt(target, count, ok, scrub(error, secrets) if error else None, time.time()),
        )
        return ok

    retrying = Retrying(
        stop=stop_after_attempt(max(1, policy.attempts)),
        wait=wait_exponential(multiplier=policy.first_wait_s, max=policy.max_wait_s),
        retry=retry_if_result(lambda ok: not ok),
        retry_error_callback=_gave_up,
        sleep=sleep,
    )
    went = bool(retrying(once))
    if not went:
        log.warning("a notice to %s was not delivered after %d attempts", target, count)
    return went


def _send(plugin: NotifyBase, title: str, body: str) -> tuple[bool, str | None]:
    """One ``notify()``: whether it went and, if not, Apprise's reason."""
    caught = _ThreadWarnings()
    logger = logging.getLogger(APPRISE_LOGGER)
    logger.addHandler(caught)
    try:
        ok = bool(plugin.notify(body=body, title=title, body_format=NotifyFormat.TEXT))
    except Exception as exc:  # a plugin's own failure: the schedule must go on
        caught.lines.append(f"{type(exc).__name__}: {exc}")
        ok = False
    finally:
        logger.removeHandler(caught)
    return ok, None if ok else ("; ".join(caught.lines[-2:]) or "the service refused the notice")


def _gave_up(state: RetryCallState) -> bool:
    return False


def _tell(on_attempt: Callable[[Attempt], None] | None, attempt: Attempt) -> None:
    if on_attempt is None:
        return
    try:
        on_attempt(attempt)
    except Exception:  # a record that cannot be written must not stop the sending
        log.exception("a delivery record could not be kept")
