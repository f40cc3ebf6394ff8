"""One way to ask a scholarly API, under the house's HTTP rules and each API's terms.

- a deadline per call and a cap on the answer's bytes (counted as they arrive, decoded, so a
  compressed bomb stops at the cap too);
- no proxy from the environment (``trust_env=False``, as every client of the house);
- one call at a time per host, and the least pause between calls the API asks for (arXiv's
  three seconds, NCBI's three a second), kept for the whole process (:class:`Gate`);
- a 429, a 5xx or an answer that cannot be read is asked once more after a backoff (the
  server's ``Retry-After`` if it sends one, within ``max_backoff_s``), then fails as the
  house's :class:`~local2.errors.ToolError` with its cause (:mod:`..search_failures`);
- a key is sent, never shown: every value named as secret is cut from what is kept of a
  failure.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

import httpx

from local2.errors import ToolError
from local2.ports import tls_context
from local2.tools._scholarly.settings import ApiSettings, ScholarlySettings
from local2.tools._search_failures import (
    DOCTOR,
    UNREACHABLE,
    bad_reply,
    cannot_connect,
    detail_of,
    status_failure,
    timed_out,
)

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class Clock(Protocol):
    """Time as the gate reads it: tests pass one that records the pauses instead."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK = SystemClock()


class Malformed(ToolError, ValueError):
    """An answer that is not what the API documents (raised by a provider's parser, caught
    by :meth:`ApiClient.get`, which asks again and then says so as a ``bad_reply``)."""


class Gate:
    """One host's turn: a call waits for the one before it and for the pause after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = float("-inf")

    @contextmanager
    def turn(self, interval_s: float, clock: Clock) -> Iterator[None]:
        with self._lock:
            wait = self._last + interval_s - clock.monotonic()
            if wait > 0:
                clock.sleep(wait)
            try:
                yield
            finally:
                self._last = clock.monotonic()


_GATES: dict[str, Gate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(url: str) -> Gate:
    """The process's gate for ``url``'s host and port (one per API, however many providers
    or threads ask it)."""
    parts = urlsplit(url)
    key = f"{parts.scheme}://{parts.netloc}".lower()
    with _GATES_LOCK:
        return _GATES.setdefault(key, Gate())


@dataclass
class Answer:
    """An API's answer: its status, headers and body (within the cap)."""

    status: int
    headers: httpx.Headers
    body: bytes


class TooLarge(ToolError):
    """An answer past ``max_bytes`` (caught where the call is made, never let out)."""


def bad_address(label: str, setting: str, base_url: str, exc: Exception) -> ToolError:
    """A base URL httpx cannot ask (a typo in the settings): nothing was sent."""
    return ToolError(
        f"cannot ask {label}: its address is not a URL ({' '.join(str(exc).split())[:120]})",
        data={"cause": UNREACHABLE, "detail": f"{type(exc).__name__}: {exc}"},
        fix=f"Give `{setting}.base_url` as an http(s) URL (it is {base_url!r}).",
    )


def retry_after(headers: Mapping[str, str], default: float, cap: float) -> float:
    """The pause a server asks for (``Retry-After``: seconds or an HTTP date), within
    ``cap``; ``default`` when it asks for none."""
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return min(default, cap)
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return min(default, cap)
        seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, cap))


class ApiClient:
    """Asks one API (``label``, in the person's words: "arXiv") under its settings."""

    def __init__(
        self,
        name: str,
        label: str,
        api: ApiSettings,
        common: ScholarlySettings,
        *,
        clock: Clock = SYSTEM_CLOCK,
        transport: httpx.BaseTransport | None = None,
        setting: str = "",
    ) -> None:
        self.name, self.label, self.api, self.common = name, label, api, common
        self.clock = clock
        self._transport = transport
        self.setting = setting or f"scholarly.{name}"
        self.interval_s: Callable[[], float] = lambda: api.min_interval_s
        self.secrets: tuple[str, ...] = ()

    def _scrub(self, text: str) -> str:
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _fix(self, what: str) -> str:
        return f"{what} Or leave {self.name} out of the run's sources (`--sources`). {DOCTOR}"

    def _receive(
        self, url: str, params: Mapping[str, str | int], headers: dict[str, str]
    ) -> Answer:
        with (
            httpx.Client(
                timeout=self.api.timeout_s,
                transport=self._transport,
                trust_env=False,
                verify=tls_context(False),
                follow_redirects=True,
                limits=httpx.Limits(max_connections=1),
                headers={"User-Agent": self.common.user_agent, **headers},
            ) as client,
            client.stream("GET", url, params=params) as response,
        ):
            body = bytearray()
            # httpx's timeout is per read: a server that trickles bytes is stopped here
            deadline = time.monotonic() + self.api.timeout_s
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.api.max_bytes:
                    raise TooLarge(f"more than {self.api.max_bytes} bytes")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer took longer than the deadline")
            return Answer(response.status_code, response.headers, bytes(body))

    def _once(self, url: str, params: Mapping[str, str | int], headers: dict[str, str]) -> Answer:
        try:
            return self._attempt(url, params, headers)
        except ToolError as error:
            error.message = self._scrub(error.message)
            error.args = (error.message,)
            error.data = {
                k: self._scrub(v) if isinstance(v, str) else v for k, v in error.data.items()
            }
            raise

    def _attempt(
        self, url: str, params: Mapping[str, str | int], headers: dict[str, str]
    ) -> Answer:
        try:
            with gate_for(url).turn(self.interval_s(), self.clock):
                return self._receive(url, params, headers)
        except httpx.TimeoutException as exc:
            raise timed_out(self.api.timeout_s, self._scrub(detail_of(exc))) from None
        except TooLarge:
            raise bad_reply(
                self.label, f"more than {self.api.max_bytes:,} bytes: `{self.setting}.max_bytes`"
            ) from None
        except httpx.InvalidURL as exc:
            raise bad_address(self.label, self.setting, self.api.base_url, exc) from None
        except httpx.HTTPError as exc:
            raise cannot_connect(
                self.label,
                exc,
                address_fix=f"Check `{self.setting}.base_url` ({self.api.base_url}).",
            ) from None

    def get(
        self,
        url: str,
        params: Mapping[str, str | int],
        parse: Callable[[Answer], T],
        headers: dict[str, str] | None = None,
    ) -> tuple[T, list[str]]:
        """``parse(answer)`` of a GET, asked again once after a 429, a 5xx or an answer
        ``parse`` finds malformed; the retries said in words beside it."""
        retried: list[str] = []
        for attempt in (1, 2):
            answer = self._once(url, params, dict(headers or {}))
            if answer.status in RETRY_STATUSES:
                problem, why = f"answered {answer.status}", ""
            elif answer.status == 200:
                try:
                    return parse(answer), retried
                except ValueError as exc:  # Malformed, or a JSON or XML syntax error
                    why = self._scrub(" ".join(str(exc).split()))[:200] or "malformed"
                    problem = f"sent an answer that could not be read ({why})"
            else:
                raise self._failure(answer, "")
            if attempt == 2:
                raise self._failure(answer, why)
            pause = retry_after(
                answer.headers, self.common.retry_backoff_s, self.common.max_backoff_s
            )
            retried.append(f"{self.label} {problem}; asked again after {pause:g} s")
            self.clock.sleep(pause)
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _failure(self, answer: Answer, why: str) -> ToolError:
        """The failure of the last answer; ``why`` an answer of 200 could not be read."""
        status = answer.status
        if status == 200:
            error = bad_reply(self.label, why)
        elif status == 429:
            error = status_failure(
                429,
                f"{self.label} limits how often it is asked: try again later",
                self._fix(
                    "Wait a few minutes and ask again (a key raises the limit, if it has one)."
                ),
            )
        elif status in (401, 403):
            error = status_failure(
                status,
                f"{self.label} refused the key or the request",
                self._fix(
                    f"Check the key {self.label} is given (its variable in `{self.setting}`)."
                ),
            )
        elif status >= 500:
            error = status_failure(
                status, f"{self.label} failed on its side", self._fix("Ask again later.")
            )
        else:
            error = status_failure(
                status, f"{self.label} refused the request", self._fix("Rephrase the query.")
            )
        error.data |= {"source": self.name, "status": status}
        return error
