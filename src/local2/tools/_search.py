"""The ``web_search`` tool: pick a provider from settings and format its hits for the model.

The result text starts with today's date so time-sensitive answers are grounded, and
lists each hit's title, snippet and URL so the model can pass a URL on to ``web_fetch``.

Which search provider answers: the one configured, or for ``auto`` the first that can.

``auto`` orders the registered providers that can serve right now (the registry below,
each provider's ``auto`` rule and rank): as shipped, Tavily when ``TAVILY_API_KEY`` is set,
Brave when ``BRAVE_API_KEY`` is set, SearXNG when ``searxng_url`` answers, and ``ddgs``
(keyless) last. A provider that fails hands the query to the next, and each hand-over is a
``tool.fallback`` event; mock is never a fallback, only a configured choice. When the last
fails too, its error says whether every provider failed for a cause no other query can
cure (``ToolError.data["lasting"]``: no network, a refused connection or key), so a research
run stops searching the web instead of trying other words.

Search providers: each turns a query into a list of hits, or raises ``ToolError``.

All providers raise the same strings (``search timeout after Ns``,
``search failed: <status>``), adding a short explanation for 401/403/429 that names the
environment variable to check but never its value; a search that never reached its
provider says why in the person's words (:mod:`local2.tools._search_failures`: no network,
a refused connection), its client's own text kept for the event log only.

The search providers, each registered by its own module in :mod:`local2.tools.search`.

A provider is one file: its class, its settings (a
:class:`~local2.config._search_registry.ProviderSettings` of its keys under ``web.search``),
how it is made from them, whether and why ``auto`` tries it, the key it reads from the
environment, and what ``local2 doctor`` checks before a test search. It ends with
``register_provider(ProviderSpec(...))``; the settings (the names ``web.search.provider``
accepts and the keys it refuses), the chain (:func:`make_chain`), the doctor and the
documentation's checks read this registry, so none of them names a provider.

A research run's scope pushed into the web engines' own filters, where they have them.

The run's search (:mod:`local2.tools._sourced_search`) sets the scope for the one web search
it makes (:func:`searching_within`, a context variable: the engines are called in that
thread), and each engine adds what its API reads of it: SearXNG ``time_range``, Brave
``freshness`` (a date range), Tavily ``start_date``/``end_date`` and its domain lists,
DuckDuckGo ``timelimit``. A time window that ends before today has no "past week" an engine
could read: SearXNG and DuckDuckGo are then not told, and the window is applied to the hits
as for every source (a web hit is undated, so kept and counted). The scope is read by its
shape (:class:`WebScope`): the engines' modules are below the scope's.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict

from local2 import events
from local2.config import (
    ProviderSettings,
    ToolSchema,
    WebSearchSettings,
    provider_settings,
    register_settings,
    unregister_settings,
)
from local2.contracts import WEB_SEARCH
from local2.documents import clean_text
from local2.errors import ToolError
from local2.ports import tls_context
from local2.tools._base import ToolContext, ToolResult, declare
from local2.tools._search_failures import (
    DOCTOR,
    RATE_FIX,
    bad_reply,
    cannot_connect,
    detail_of,
    lasting,
    status_failure,
    timed_out,
)

if TYPE_CHECKING:
    import httpx


STATUS_HINTS = {
    401: "the API key was rejected: check {env}",
    403: "access forbidden: the key or plan does not allow this request",
    429: "rate limit or quota exceeded: try again later",
}


@dataclass(frozen=True)
class SearchHit:
    """One search result as the model sees it."""

    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """Anything that can search: ``search(query, max_results) -> hits``."""

    name: str

    def search(self, query: str, max_results: int) -> list[SearchHit]: ...


def _fmt_seconds(seconds: float) -> str:
    return f"{seconds:g}"


def search_timeout(seconds: float, detail: str = "") -> ToolError:
    return timed_out(float(_fmt_seconds(seconds)), detail)


def search_failed(status: int, env: str | None = None, hint: str | None = None) -> ToolError:
    """``search failed: <status>``, with a brief reason for the common statuses and the fix
    (for a rejected key: the variable to check, never its value)."""
    hint = hint or STATUS_HINTS.get(status, "").format(env=env or "the API key")
    fix = ""
    if status in (401, 403):
        key = f"`{env}`" if env else "the API key"
        fix = (
            f"Check {key} (and the plan it belongs to), or set another provider in web.yaml "
            f"(`search.provider`). {DOCTOR}"
        )
    elif status == 429:
        fix = RATE_FIX
    return status_failure(status, hint, fix)


def _hit(title: Any, url: Any, snippet: Any) -> SearchHit | None:
    if not url or not isinstance(url, str):
        return None
    return SearchHit(title=str(title or url), url=url, snippet=str(snippet or ""))


def hits_from(
    items: Any, snippet_key: str, max_results: int, url_key: str = "url"
) -> list[SearchHit]:
    hits = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            hit = _hit(item.get("title"), item.get(url_key), item.get(snippet_key))
            if hit:
                hits.append(hit)
    return hits[:max_results]


class HttpJsonProvider:
    """Shared GET-a-JSON-API logic for SearXNG and Brave (and any provider of that kind)."""

    name = "http"
    key_env: str | None = None
    label = "the search API"  # who failed, in the person's words
    address_fix = ""  # at an address the person chose: how to correct it

    def __init__(self, timeout_s: float, transport: httpx.BaseTransport | None = None):
        self.timeout_s = timeout_s
        self._transport = transport

    def get_json(self, url: str, params: Mapping[str, str | int], headers: dict[str, str]) -> Any:
        # httpx loads with the first search, not here: loading settings imports the
        # providers' modules to learn their keys, and httpx is about 0.1 s of that start.
        import httpx

        try:
            with httpx.Client(
                timeout=self.timeout_s,
                transport=self._transport,
                trust_env=False,
                verify=tls_context(False),
            ) as client:
                response = client.get(url, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except httpx.HTTPError as exc:
            raise cannot_connect(self.label, exc, address_fix=self.address_fix) from None
        if response.status_code != 200:
            raise self.failure(response.status_code)
        try:
            return response.json()
        except ValueError as exc:
            raise bad_reply(self.label, "not JSON", detail_of(exc)) from None

    def failure(self, status: int) -> ToolError:
        return search_failed(status, self.key_env)


Probe = Callable[[str], bool]  # does anything answer HTTP at this URL (answers_http)
PROBE_TIMEOUT_S = 0.5
PROBE_TTL_S = 60.0
_probes: dict[str, tuple[float, bool]] = {}
_probes_lock = threading.Lock()
Status = Literal["ok", "warn", "fail"]


class AutoRule(Protocol):
    """Why ``auto`` tries the provider now (``None``: not now), e.g. its key is set."""

    def __call__(
        self, cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe
    ) -> str | None: ...


class Maker(Protocol):
    """The provider, made from ``web.search`` (``hooks``: a test's stand-ins, by name)."""

    def __call__(self, cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> SearchProvider: ...


@dataclass(frozen=True)
class Precheck:
    """What ``local2 doctor`` says before (instead of) a test search."""

    status: Status
    detail: str
    fix: str


@dataclass(frozen=True)
class ProviderSpec:
    """One search provider as everything else sees it.

    ``auto``: why ``auto`` tries it now, or ``None`` (never part of ``auto``); ``rank``
    orders ``auto``'s list (lower first). ``key_env``: the environment variable its key is
    read from (never from a file); ``key_required``: named without that key, it cannot
    search (the doctor says so). ``precheck``: anything else the doctor finds without
    searching (``named``: the configured provider, not one of ``auto``'s)."""

    name: str
    settings: type[ProviderSettings]
    make: Maker
    auto: AutoRule | None = None
    rank: int = 50
    key_env: str | None = None
    key_required: bool = False
    precheck: Callable[[WebSearchSettings, bool], Precheck | None] | None = None

    def doctor(
        self, cfg: WebSearchSettings, env: Mapping[str, str], named: bool
    ) -> Precheck | None:
        """The doctor's finding without a search, if any."""
        if named and self.key_required and self.key_env and not has_key(env, self.key_env):
            return Precheck(
                "fail", f"provider {self.name} needs {self.key_env}", f"export {self.key_env}=..."
            )
        return self.precheck(cfg, named) if self.precheck else None


_specs: dict[str, ProviderSpec] = {}


def register_provider(spec: ProviderSpec) -> ProviderSpec:
    """Make ``spec`` known: to the settings (its name and keys) and to the chain and doctor."""
    _specs[spec.name] = spec
    register_settings(spec.name, spec.settings)
    return spec


def unregister_provider(name: str) -> None:
    """Forget a provider (one a test registered for a while)."""
    _specs.pop(name, None)
    unregister_settings(name)


def provider_specs() -> list[ProviderSpec]:
    """Every provider, in ``auto``'s order (then by name): the shipped ones found first."""
    provider_settings()  # imports local2.tools.search's modules once
    return sorted(_specs.values(), key=lambda s: (s.rank, s.name))


def provider_spec(name: str) -> ProviderSpec:
    found = {s.name: s for s in provider_specs()}.get(name)
    if found is None:
        raise ValueError(f"unknown search provider {name!r}")
    return found


def has_key(env: Mapping[str, str], key: str) -> bool:
    return bool(env.get(key, "").strip())


def key_of(key_env: str) -> str | None:
    """The key in the environment, or ``None`` (a provider reads it per search: it may be
    exported while the app runs)."""
    return os.environ.get(key_env, "").strip() or None


def when_key_set(key_env: str) -> AutoRule:
    """``auto`` tries the provider while ``key_env`` is set."""

    def rule(cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe) -> str | None:
        return f"{key_env} is set" if has_key(env, key_env) else None

    return rule


def answers_http(url: str) -> bool:
    """Does anything answer HTTP at ``url``? Remembered for a minute (checked per search)."""
    import httpx  # with the first search: see HttpJsonProvider.get_json

    now = time.monotonic()
    with _probes_lock:
        known = _probes.get(url)
        if known and now - known[0] < PROBE_TTL_S:
            return known[1]
    try:
        httpx.get(url, timeout=PROBE_TIMEOUT_S, trust_env=False, verify=tls_context(False))
        answers = True
    except httpx.HTTPError:
        answers = False
    with _probes_lock:
        _probes[url] = (now, answers)
    return answers


class WebScope(Protocol):
    """What the engines' filters read of a run's scope: a :class:`local2.tools._scholarly.Scope`
    is one. Read by its shape, since the scope's module is above this one (its hits are this
    module's :class:`SearchHit`)."""

    @property
    def since(self) -> date | None: ...

    @property
    def until(self) -> date | None: ...

    @property
    def domains(self) -> tuple[str, ...]: ...

    @property
    def exclude_domains(self) -> tuple[str, ...]: ...


_SCOPE: ContextVar[WebScope | None] = ContextVar("local2_web_scope", default=None)
# the engines' relative windows, the shortest first: (name, days it reaches back)
_SPANS = (("day", 1), ("week", 7), ("month", 31), ("year", 366))


@contextmanager
def searching_within(scope: WebScope | None) -> Iterator[None]:
    """The web searches made in this block are within ``scope``."""
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current_scope() -> WebScope | None:
    return _SCOPE.get()


def relative_span(scope: WebScope | None, today: date | None = None) -> str | None:
    """The shortest of day/week/month/year that holds the window ``since`` to today, or
    ``None`` (no ``since``, a window ending before today, or one longer than a year)."""
    if scope is None or scope.since is None:
        return None
    today = today or date.today()
    if scope.until is not None and scope.until < today:
        return None
    back = (today - scope.since).days
    return next((name for name, days in _SPANS if back <= days), None)


def searxng_params(scope: WebScope | None = None) -> dict[str, str]:
    span = relative_span(scope if scope is not None else current_scope())
    return {"time_range": span} if span else {}


def ddgs_params(scope: WebScope | None = None) -> dict[str, str]:
    span = relative_span(scope if scope is not None else current_scope())
    return {"timelimit": span[0]} if span else {}  # d, w, m, y


def brave_params(scope: WebScope | None = None, today: date | None = None) -> dict[str, str]:
    """Brave's ``freshness`` as ``YYYY-MM-DDtoYYYY-MM-DD``."""
    scope = scope if scope is not None else current_scope()
    if scope is None or not (scope.since or scope.until):
        return {}
    start = scope.since or date(1990, 1, 1)
    stop = scope.until or (today or date.today()) + timedelta(days=1)
    return {"freshness": f"{start.isoformat()}to{stop.isoformat()}"}


def tavily_params(scope: WebScope | None = None) -> dict[str, str | list[str]]:
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


def auto_reasons(
    cfg: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    probe: Probe = answers_http,
) -> list[tuple[str, str]]:
    """``(provider, why)`` in the order ``auto`` tries them."""
    env = os.environ if env is None else env
    order = []
    for spec in provider_specs():
        why = spec.auto(cfg, env, probe) if spec.auto is not None else None
        if why is not None:
            order.append((spec.name, why))
    return order


def named_provider(
    name: str, cfg: WebSearchSettings, ddgs_client: Callable[[float], Any] | None = None
) -> SearchProvider:
    """The provider registered as ``name``, made from ``cfg`` (``ddgs_client``: a test's
    stand-in for the ddgs package's client)."""
    hooks = {"ddgs_client": ddgs_client} if ddgs_client is not None else {}
    return provider_spec(name).make(cfg, hooks)


class Fallback(TypedDict):
    """A provider that failed and the one tried next (a ``tool.fallback`` event's fields)."""

    tool: str
    failed: str
    error: str  # in the person's words
    next: str
    detail: NotRequired[str]  # the client's own text (the event log's only)
    cause: NotRequired[str]  # local2.tools._search_failures' name for it


@dataclass
class SearchAnswer:
    hits: list[SearchHit]
    provider: str  # the one that answered
    canned: bool = False  # mock results
    fallbacks: list[Fallback] = field(default_factory=list)


SEARCH_FIX = (
    "Check this machine's network connection, or set another provider in web.yaml "
    f"(`search.provider`: searxng, tavily or brave). {DOCTOR}"
)


def fallback_events(fallbacks: list[Fallback]) -> list[tuple[str, dict[str, object]]]:
    return [(events.TOOL_FALLBACK, dict(f)) for f in fallbacks]


def _fallback(failed: str, exc: ToolError, next_name: str) -> Fallback:
    handed: Fallback = {
        "tool": WEB_SEARCH,
        "failed": failed,
        "error": str(exc),
        "next": next_name,
    }
    if detail := exc.data.get("detail"):
        handed["detail"] = str(detail)
    if cause := exc.data.get("cause"):
        handed["cause"] = str(cause)
    return handed


class ProviderChain:
    """The providers to try, in order; ``providers`` is re-evaluated per search (keys and a
    local SearXNG may come and go while the app runs)."""

    def __init__(self, providers: Callable[[], Sequence[SearchProvider]]):
        self.providers = providers

    def search(self, query: str, max_results: int) -> SearchAnswer:
        chain = list(self.providers())
        fallbacks: list[Fallback] = []
        for i, provider in enumerate(chain):
            try:
                hits = provider.search(query, max_results)
            except ToolError as exc:
                if i + 1 == len(chain):
                    causes = [str(f.get("cause") or "") for f in fallbacks]
                    causes.append(str(exc.data.get("cause") or ""))
                    raise ToolError(
                        str(exc),
                        fallback_events(fallbacks),
                        {**exc.data, "provider": provider.name, "lasting": lasting(causes)},
                        exc.fix or SEARCH_FIX,
                    ) from None
                fallbacks.append(_fallback(provider.name, exc, chain[i + 1].name))
                continue
            canned = bool(getattr(provider, "canned", False))
            return SearchAnswer(hits, provider.name, canned, fallbacks)
        raise ToolError("search unavailable: no provider configured", fix=SEARCH_FIX)


def make_chain(
    cfg: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    probe: Probe = answers_http,
    ddgs_client: Callable[[float], Any] | None = None,
) -> ProviderChain:
    """The chain for ``cfg.provider``: one named provider, or ``auto``'s ordered list."""
    if cfg.provider != "auto":
        single = named_provider(cfg.provider, cfg, ddgs_client)
        return ProviderChain(lambda: [single])

    def auto() -> list[SearchProvider]:
        return [named_provider(name, cfg, ddgs_client) for name, _ in auto_reasons(cfg, env, probe)]

    return ProviderChain(auto)


# What the model is told about it: written here only (generator.tools may tune it).
WEB_SEARCH_TOOL = declare(
    ToolSchema(
        name=WEB_SEARCH,
        description=(
            "Search the web to find sources on a topic. Returns titles, snippets and URLs. "
            "Use when you need current facts, news, prices or recent events."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Concise search query"}},
            "required": ["query"],
        },
    )
)


SNIPPET_CHARS = 600
# First line of mock results, so neither the model nor the person takes them for a search.
CANNED_NOTE = "[Canned results from the mock search provider: this was not a real web search.]"


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", clean_text(text)).strip()
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"


def format_hits(hits: list[SearchHit], today: dt.date, canned: bool = False) -> str:
    """The exact result text the model reads, which research's ledger and the fallback
    extract parse (after :data:`CANNED_NOTE` for mock results)."""
    blocks = [f"Today's date: {today.isoformat()}"]
    if canned:
        blocks[0] = f"{CANNED_NOTE}\n{blocks[0]}"
    for i, hit in enumerate(hits, 1):
        blocks.append(
            f"[{i}] Title: {_one_line(hit.title, 200)}\n"
            f"Snippet: {_one_line(hit.snippet, SNIPPET_CHARS)}\n"
            f"URL: {_one_line(hit.url, 2000)}"
        )
    return "\n\n".join(blocks)


class WebSearch:
    """Callable tool body: validates the query, searches (with fallbacks), formats."""

    def __init__(
        self,
        cfg: WebSearchSettings,
        provider: SearchProvider | ProviderChain | None = None,
        today: Callable[[], dt.date] = dt.date.today,
    ):
        self.cfg = cfg
        if provider is None:
            provider = make_chain(cfg)
        elif not isinstance(provider, ProviderChain):
            single = provider
            provider = ProviderChain(lambda: [single])
        self.chain = provider
        self.today = today

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        query = args.get("query") if isinstance(args, Mapping) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolError("missing query argument")
        query = re.sub(r"\s+", " ", clean_text(query)).strip()
        wanted = (ctx.max_results if ctx is not None else None) or self.cfg.max_results
        found: SearchAnswer = self.chain.search(query, wanted)
        hits = found.hits
        data = {"provider": found.provider, "count": len(hits), "urls": [h.url for h in hits]}
        events = fallback_events(found.fallbacks)
        if not hits:
            text = f"No results found for: {query}"
            if found.canned:
                text = f"{CANNED_NOTE}\n{text}"
            return ToolResult(text=text, data=data, events=events)
        return ToolResult(
            text=format_hits(hits, self.today(), found.canned), data=data, events=events
        )
