"""A run scoped in time and place: ``--since/--until`` and ``--domains/--exclude-domains``.

:func:`parse_scope` turns what a person typed (dates, ``past week|month|year``, domain
lists) into a :class:`Scope` or refuses it with a message that says what was wrong and
what is accepted. A provider pushes the scope into its API's own filter where it has one and
says so (:class:`Pushed`); :func:`apply_scope` applies it to the hits either way, so a hit
dated outside the window, or on a domain left out, never reaches the model. A hit with no
date is kept (nothing says it is outside) and counted, so the report can say how many were
undated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from urllib.parse import urlsplit

from local2.errors import InvalidInput
from local2.tools._scholarly.hit import ScholarlyHit, date_span
from local2.tools._search import SearchHit

DATE_FORMS = "a date (2024-03-05, 2024-03 or 2024) or 'past week', 'past month', 'past year'"
_RELATIVE = re.compile(r"^(?:past|last)\s+(?:(\d{1,4})\s+)?(day|week|month|year)s?$")
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Scope:
    """Where and when a source may come from; an empty scope allows everything."""

    since: date | None = None
    until: date | None = None
    domains: tuple[str, ...] = ()  # only these (and their subdomains)
    exclude_domains: tuple[str, ...] = ()  # never these

    @property
    def timed(self) -> bool:
        return self.since is not None or self.until is not None

    @property
    def placed(self) -> bool:
        return bool(self.domains or self.exclude_domains)

    def describe(self) -> str:
        """The scope in a sentence for the report ("" when there is none)."""
        said = []
        if self.since and self.until:
            said.append(f"published from {self.since.isoformat()} to {self.until.isoformat()}")
        elif self.since:
            said.append(f"published on or after {self.since.isoformat()}")
        elif self.until:
            said.append(f"published on or before {self.until.isoformat()}")
        if self.domains:
            said.append("only from " + ", ".join(self.domains))
        if self.exclude_domains:
            said.append("never from " + ", ".join(self.exclude_domains))
        return ("Sources " + "; ".join(said) + ".") if said else ""


@dataclass(frozen=True)
class Pushed:
    """Which parts of a scope a provider's own API applied (its query or filter)."""

    time: bool = False
    domains: bool = False


@dataclass
class Scoped:
    """Hits after the scope: kept, dropped (each with why), and how many kept were undated."""

    kept: list[SearchHit] = field(default_factory=list)
    dropped: list[tuple[SearchHit, str]] = field(default_factory=list)
    undated: int = 0


def _refuse(message: str, fix: str) -> InvalidInput:
    return InvalidInput(message, fix)


def _months_back(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    month += 1
    for last in (day.day, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last))
        except ValueError:
            continue
    raise AssertionError("unreachable: every month has 28 days")


def relative_start(text: str, today: date) -> date | None:
    """``past week`` (``last 2 months``, ``past 3 years``) as the day it starts, or ``None``
    when ``text`` is not of that form."""
    found = _RELATIVE.match(" ".join(text.lower().split()))
    if not found:
        return None
    count = int(found.group(1) or 1)
    unit = found.group(2)
    if unit == "day":
        return today - timedelta(days=count)
    if unit == "week":
        return today - timedelta(weeks=count)
    return _months_back(today, count * (12 if unit == "year" else 1))


def parse_day(text: str, flag: str, *, end: bool) -> date:
    """``2024-03-05`` as that day; ``2024-03`` or ``2024`` as its first day (``end``: its
    last, for ``--until``), or refused naming ``flag`` and the forms accepted."""
    found = _DATE.match(text.strip())
    if not found:
        raise _refuse(f"{flag} {text!r} is not a date", f"Give {flag} as {DATE_FORMS}.")
    year, month, day = (int(p) if p else 0 for p in found.groups())
    try:
        if day:
            return date(year, month, day)
        span = date_span(f"{year:04d}-{month:02d}" if month else f"{year:04d}")
        if (month and not 1 <= month <= 12) or span is None:
            raise ValueError(text)
    except ValueError:
        raise _refuse(
            f"{flag} {text!r} is not a date of the calendar", f"Give {flag} as {DATE_FORMS}."
        ) from None
    return span[1] if end else span[0]


def _when(text: str | None, flag: str, today: date, *, end: bool) -> date | None:
    if text is None or not text.strip():
        return None
    start = relative_start(text, today)
    if start is not None:
        if end:
            raise _refuse(
                f"{flag} {text!r}: 'past ...' names where a window starts",
                f"Give it as --since {text!r}, or give {flag} as a date.",
            )
        return start
    return parse_day(text, flag, end=end)


def domain_of(text: str) -> str:
    """``https://www.Nature.com/articles`` as ``nature.com``: host only, lower case, no
    ``www.``; refused if it is not a host name."""
    raw = text.strip().lower()
    host = urlsplit(raw if "//" in raw else f"//{raw}").hostname or ""
    host = host.removeprefix("*.").removeprefix("www.").rstrip(".")
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = ""
    labels = ascii_host.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise _refuse(
            f"{text.strip()!r} is not a domain",
            "Give domains as host names separated by commas, e.g. nature.com,arxiv.org.",
        )
    return ascii_host


def domain_list(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"nature.com, arxiv.org"`` or ``["nature.com"]`` as normalised domains, in order,
    each once."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else [p for v in value for p in v.split(",")]
    return tuple(dict.fromkeys(domain_of(item) for item in items if item.strip()))


def parse_scope(
    since: str | None = None,
    until: str | None = None,
    domains: str | Sequence[str] | None = None,
    exclude_domains: str | Sequence[str] | None = None,
    *,
    today: date | None = None,
) -> Scope:
    """What a person typed as a :class:`Scope`, or :class:`InvalidInput` saying what is wrong
    (a malformed date, ``--since`` after ``--until``, a domain both wanted and excluded)."""
    today = today or date.today()
    start = _when(since, "--since", today, end=False)
    stop = _when(until, "--until", today, end=True)
    if start and stop and start > stop:
        raise _refuse(
            f"--since {start.isoformat()} is after --until {stop.isoformat()}: no source can be "
            "in that window",
            "Give a --since on or before --until (or leave one of them out).",
        )
    wanted = domain_list(domains)
    unwanted = domain_list(exclude_domains)
    both = sorted(set(wanted) & set(unwanted))
    if both:
        raise _refuse(
            f"{', '.join(both)} is both in --domains and in --exclude-domains",
            "Name each domain in one of the two lists.",
        )
    return Scope(since=start, until=stop, domains=wanted, exclude_domains=unwanted)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower().removeprefix("www.")
    except ValueError:
        return ""


def on_domain(host: str, domains: Iterable[str]) -> str | None:
    """The domain of ``domains`` that ``host`` is (or is under), else ``None``."""
    return next((d for d in domains if host == d or host.endswith("." + d)), None)


def outside(hit: SearchHit, scope: Scope) -> str | None:
    """Why ``hit`` is outside ``scope`` (in words), or ``None`` when it may be used."""
    urls = hit.urls() if isinstance(hit, ScholarlyHit) else (hit.url,)
    hosts = [h for h in (_host(u) for u in urls) if h]
    for host in hosts:
        excluded = on_domain(host, scope.exclude_domains)
        if excluded:
            return f"on {excluded}, which is excluded"
    if scope.domains and not any(on_domain(h, scope.domains) for h in hosts):
        return f"on {hosts[0] if hosts else 'no domain'}, not one of {', '.join(scope.domains)}"
    return outside_window(hit.published if isinstance(hit, ScholarlyHit) else None, scope)


def outside_window(published: str | None, scope: Scope) -> str | None:
    """Why what is dated ``published`` falls outside ``scope``'s window, in words
    ("published 2019-04-02, before 2024-01-01"), or ``None`` (inside, or undated: nothing
    dates it outside)."""
    span = date_span(published)
    if span is None:
        return None
    first, last = span
    if scope.since and last < scope.since:
        return f"published {published}, before {scope.since.isoformat()}"
    if scope.until and first > scope.until:
        return f"published {published}, after {scope.until.isoformat()}"
    return None


def apply_scope(hits: Iterable[SearchHit], scope: Scope) -> Scoped:
    """The hits ``scope`` allows, in order, and the ones it drops with why. Applied whether
    or not the provider pushed it: a provider's filter may read another date than ours
    (arXiv's is the first version's) and a hit carries the one a citation shows."""
    scoped = Scoped()
    for hit in hits:
        why = outside(hit, scope)
        if why:
            scoped.dropped.append((hit, why))
            continue
        scoped.kept.append(hit)
        if scope.timed and not (isinstance(hit, ScholarlyHit) and date_span(hit.published)):
            scoped.undated += 1
    return scoped
