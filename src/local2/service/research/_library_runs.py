"""Research and the library (docs/library.md): a run's sources (``web``, ``library`` or
``both``), what it keeps (``library.keep``, or its own ``keep``), and, when it ends, its
citations recorded on the entries it read.

A run from the library gets services of its own whose ``web_search`` and ``web_fetch`` are
the library's (:func:`local2.tools.library_tools.library_sourced`); with ``library`` no
tool that reaches outside is left, so the run opens no connection.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from typing import Any

from local2.config import Settings
from local2.contracts import Keep, ResearchItem, RunScope, Sources
from local2.errors import InvalidInput
from local2.graph import Services
from local2.library import ReadingLibrary
from local2.research import ResearchContext, ResearchState
from local2.service.research._driver import RunDriver
from local2.storage import SteerInbox
from local2.tools import (
    Scope,
    library_sourced,
    parse_day,
    parse_scope,
    parse_sources,
    sourced_tools,
)

SOURCES: tuple[Sources, ...] = ("web", "library", "both")
KEEPS: tuple[Keep, ...] = ("all", "research", "off")
_CITE = re.compile(r"\[(\d+)\]")


def check_sources(sources: str) -> Sources:
    for known in SOURCES:
        if sources == known:
            return known
    raise InvalidInput(f"Unknown sources {sources!r}.", "Use web, library or both.")


ScopeAsked = Mapping[str, Any]  # since, until, domains, exclude_domains, as a person gave them
SCOPE_KEYS = ("since", "until", "domains", "exclude_domains")
# A later ``since`` for the first round alone (a watch's run: what appeared since the last one)
FIRST_ROUND = "first_round_since"


def looks_in_of(names: Sequence[str]) -> Sources:
    """``web|library|both`` of the sources named (what the library's rules read)."""
    if "library" not in names:
        return "web"
    return "library" if len(names) == 1 else "both"


def run_sources(value: str | Sequence[str] | None, settings: Settings) -> tuple[str, ...]:
    """The sources a run searches: those given (``web,arxiv``, or ``web|library|both``), else
    ``research.sources``; an unknown one is refused with the known ones."""
    return parse_sources(value if value else list(settings.research.sources))


def first_round_since(value: object, scope: Scope) -> date | None:
    """The day the first round looks from (``value``: an ISO date), or ``None`` when it
    narrows nothing: no day given, one not after the scope's own ``since``, or one after its
    ``until`` (the person's own window holds: a window that ended is not looked past)."""
    if value in (None, ""):
        return None
    day = value if isinstance(value, date) else parse_day(str(value), FIRST_ROUND, end=False)
    if scope.since is not None and day <= scope.since:
        return None
    if scope.until is not None and day > scope.until:
        return None
    return day


def first_round_said(day: date) -> str:
    return f"The first round looks only at sources published on or after {day.isoformat()}."


def run_scope(asked: ScopeAsked | None, settings: Settings) -> RunScope | None:
    """A run's scope as given (each key left out: ``research.<key>``), checked, its relative
    dates resolved to days; ``None`` when it has none. ``first_round_since`` narrows the
    first round alone (:func:`first_round_since`); every round keeps the rest."""
    research = settings.research
    given = {k: v for k, v in (asked or {}).items() if k in SCOPE_KEYS and v not in (None, "", [])}
    values = {k: given.get(k, getattr(research, k)) for k in SCOPE_KEYS}
    scope = parse_scope(**values)
    first = first_round_since((asked or {}).get(FIRST_ROUND), scope)
    if not (scope.timed or scope.placed or first):
        return None
    said = scope.describe()
    record = RunScope(
        since=scope.since.isoformat() if scope.since else None,
        until=scope.until.isoformat() if scope.until else None,
        domains=list(scope.domains),
        exclude_domains=list(scope.exclude_domains),
        said=" ".join(p for p in (said, first_round_said(first) if first else "") if p),
    )
    if first is not None:
        record["first_round_since"] = first.isoformat()
    return record


def scope_of(record: RunScope | None) -> Scope:
    """The :class:`Scope` a run's record says for every round (an empty one for none)."""
    if not record:
        return Scope()
    return parse_scope(
        record.get("since"),
        record.get("until"),
        record.get("domains"),
        record.get("exclude_domains"),
    )


def first_scope_of(record: RunScope | None) -> Scope | None:
    """The first round's :class:`Scope` when it is narrower than the rest's, else ``None``."""
    first = record.get("first_round_since") if record else None
    if not first:
        return None
    return dataclasses.replace(scope_of(record), since=date.fromisoformat(str(first)))


def check_keep(keep: object) -> Keep:
    for known in KEEPS:
        if keep == known:
            return known
    raise InvalidInput(f"Unknown keep {keep!r}.", "Use all, research or off.")


def library_context(
    services: Services, library: ReadingLibrary, sources: Sources, inbox: SteerInbox | None
) -> ResearchContext:
    """The context a run from the library runs in: its tools the library's."""
    tools = library_sourced(services.tools, services.settings, services.backend, library, sources)
    return ResearchContext(dataclasses.replace(services, tools=tools), inbox=inbox)


def sourced_context(
    services: Services,
    library: ReadingLibrary,
    names: Sequence[str],
    scope: RunScope | None,
    inbox: SteerInbox | None,
) -> ResearchContext:
    """The context of a run told its sources by name or scoped: its ``web_search`` asks
    each of them within the scope (:func:`local2.tools.sourced_tools`)."""
    settings, backend = services.settings, services.backend
    tools = sourced_tools(
        services.tools,
        settings,
        backend,
        library,
        names,
        scope_of(scope),
        first_round=first_scope_of(scope),
    )
    return ResearchContext(dataclasses.replace(services, tools=tools), inbox=inbox)


def cited_urls(payload: Any) -> dict[str, list[int]]:
    """The URLs a report cites, each with its ``[n]`` numbers."""
    report = str(payload.get("report") or "")
    numbers = {int(n) for n in _CITE.findall(report.split("## References")[0])}
    cited: dict[str, list[int]] = {}
    for source in payload.get("sources") or []:
        if source.get("n") in numbers and source.get("url"):
            cited.setdefault(str(source["url"]), []).append(int(source["n"]))
    return cited


def noting_citations(
    items: Iterator[ResearchItem],
    library: ReadingLibrary,
    owner: str,
    sources: Sources | None = None,
    ended: Callable[[str], None] | None = None,
) -> Iterator[ResearchItem]:
    """``items`` as they come; a new run's first item says where it looks and what it keeps
    (``library``: its ``sources``, ``keep`` and a ``note`` in words); at the final payload,
    its citations are recorded on the library's entries the run read (none for a run that
    keeps nothing: it leaves no trace in the library). When the items end, ``ended(run_id)``
    (only if this stream ran the run: one refused as busy leaves the running one alone)."""
    run_id = ""
    try:
        for kind, value in items:
            if kind == "run":
                run_id = str(value.get("run_id") or "")
                if sources is not None and run_id:
                    mode = library.keep_mode(run_id)
                    note = keep_note(library, run_id)
                    value = {**value, "library": {"sources": sources, "keep": mode, "note": note}}
            elif kind == "final" and run_id and value.get("report") and keeps(library, run_id):
                library.cite(owner, run_id, cited_urls(value))
            yield kind, value
    finally:
        if run_id and ended is not None:
            ended(run_id)


def keeps(library: ReadingLibrary, run_id: str) -> bool:
    """Whether the run leaves anything in the library (kept off: no trace at all)."""
    return library.keep_mode(run_id) != "off"


def keep_note(library: ReadingLibrary, run_id: str) -> str:
    """What the run keeps, in words (a run kept off says so)."""
    mode = library.keep_mode(run_id)
    if mode == "off":
        return "Keeping nothing this run reads (library.keep: off)."
    return f"Keeping what this run reads in your library (library.keep: {mode})."


class RunSources:
    """Where each run running here looks and what it keeps: set when it starts (and kept in
    its state), set again from its state when it goes on (resumed, answered, followed up:
    in this process or another), forgotten when its stream ends."""

    def __init__(
        self, library: ReadingLibrary, driver: RunDriver, services: Services, inbox: SteerInbox
    ) -> None:
        self.library, self.driver, self.services, self.inbox = library, driver, services, inbox

    def begin(
        self,
        run_id: str,
        graph_input: ResearchState,
        sources: str | Sequence[str] | None,
        keep: Keep | None,
        scope: ScopeAsked | None = None,
    ) -> Sources:
        """A new run's ``sources`` (names, or ``web|library|both``; none: the settings'),
        ``scope`` and ``keep``, checked, in its first state and in force."""
        names = run_sources(sources, self.services.settings)
        record = run_scope(scope, self.services.settings)
        checked = looks_in_of(names)
        graph_input["looks_in"] = checked
        graph_input["looks_at"] = list(names)
        graph_input["scope"] = record
        if keep is not None:
            graph_input["keep"] = check_keep(keep)
        self._set(run_id, names, record, keep)
        return checked

    def as_begun(self, run_id: str, values: dict[str, Any]) -> None:  # a checkpoint's values
        """A run going on looks and keeps as it began."""
        keep = values.get("keep")
        looks_in = check_sources(str(values.get("looks_in") or "web"))
        names = values.get("looks_at") or parse_sources(looks_in)
        self._set(run_id, names, values.get("scope"), check_keep(keep) if keep else None)

    def _set(
        self, run_id: str, names: Sequence[str], scope: RunScope | None, keep: Keep | None
    ) -> None:
        """``library``: the person's library alone, no network; ``both``: the library first;
        other sources by name, or a scope: each searched within it; ``keep`` instead of
        ``library.keep`` (``off``: nothing)."""
        if keep is not None:
            self.library.run_keep[run_id] = keep
        plain = set(names) <= {"web", "library"} and not scope
        if plain and "library" in names:
            self.driver.contexts[run_id] = library_context(
                self.services, self.library, looks_in_of(names), self.inbox
            )
        elif not plain:
            self.driver.contexts[run_id] = sourced_context(
                self.services, self.library, names, scope, self.inbox
            )

    def ended(self, run_id: str) -> None:
        self.library.run_keep.pop(run_id, None)
        self.driver.contexts.pop(run_id, None)

    def noting(
        self, items: Iterator[ResearchItem], owner: str, sources: Sources | None = None
    ) -> Iterator[ResearchItem]:
        """The run's items (:func:`noting_citations`), forgotten here when they end."""
        return noting_citations(items, self.library, owner, sources, self.ended)
