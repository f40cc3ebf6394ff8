"""A research run's scope pushed into the web engines' own filters, where they have them.

The run's search (:mod:`local2.tools.sourced_search`) sets the scope for the one web search
it makes (:func:`searching_within`, a context variable: the engines are called in that
thread), and each engine adds what its API reads of it: SearXNG ``time_range``, Brave
``freshness`` (a date range), Tavily ``start_date``/``end_date`` and its domain lists,
DuckDuckGo ``timelimit``. A time window that ends before today has no "past week" an engine
could read: SearXNG and DuckDuckGo are then not told, and the window is applied to the hits
as for every source (a web hit is undated, so kept and counted). Nothing here reads the
scope's types at run time (the engines' modules are below the scope's).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from local2.tools.scholarly import Scope

_SCOPE: ContextVar[Scope | None] = ContextVar("local2_web_scope", default=None)
# the engines' relative windows, the shortest first: (name, days it reaches back)
_SPANS = (("day", 1), ("week", 7), ("month", 31), ("year", 366))


@contextmanager
def searching_within(scope: Scope | None) -> Iterator[None]:
    """The web searches made in this block are within ``scope``."""
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current_scope() -> Scope | None:
    return _SCOPE.get()


def relative_span(scope: Scope | None, today: date | None = None) -> str | None:
    """The shortest of day/week/month/year that holds the window ``since`` to today, or
    ``None`` (no ``since``, a window ending before today, or one longer than a year)."""
    if scope is None or scope.since is None:
        return None
    today = today or date.today()
    if scope.until is not None and scope.until < today:
        return None
    back = (today - scope.since).days
    return next((name for name, days in _SPANS if back <= days), None)


def searxng_params(scope: Scope | None = None) -> dict[str, str]:
    span = relative_span(scope if scope is not None else current_scope())
    return {"time_range": span} if span else {}


def ddgs_params(scope: Scope | None = None) -> dict[str, str]:
    span = relative_span(scope if scope is not None else current_scope())
    return {"timelimit": span[0]} if span else {}  # d, w, m, y


def brave_params(scope: Scope | None = None, today: date | None = None) -> dict[str, str]:
    """Brave's ``freshness`` as ``YYYY-MM-DDtoYYYY-MM-DD``."""
    scope = scope if scope is not None else current_scope()
    if scope is None or not (scope.since or scope.until):
        return {}
    start = scope.since or date(1990, 1, 1)
    stop = scope.until or (today or date.today()) + timedelta(days=1)
    return {"freshness": f"{start.isoformat()}to{stop.isoformat()}"}


def tavily_params(scope: Scope | None = None) -> dict[str, str | list[str]]:
    """Tavily's ``start_date``/``end_date`` and domain lists (tavily-python's arguments)."""
    scope = scope if scope is not None else current_scope()
    if scope is None:
        return {}
    params: dict[str, str | list[str]] = {}
    if scope.since:
        params["start_date"] = scope.since.isoformat()
    if scope.until:
        params["end_date"] = scope.until.isoformat()
    if scope.domains:
        params["include_domains"] = list(scope.domains)
    if scope.exclude_domains:
        params["exclude_domains"] = list(scope.exclude_domains)
    return params
