from .base import Found as Found
from .base import PagedProvider as PagedProvider
from .base import ScholarlyProvider as ScholarlyProvider
from .client import SYSTEM_CLOCK as SYSTEM_CLOCK
from .client import Clock as Clock
from .crossref import CrossrefProvider as CrossrefProvider
from .hit import ScholarlyHit as ScholarlyHit
from .hit import date_span as date_span
from .hit import from_web_hit as from_web_hit
from .named import KNOWN_SOURCES as KNOWN_SOURCES
from .named import SCHOLARLY_SOURCES as SCHOLARLY_SOURCES
from .named import parse_sources as parse_sources
from .named import scholarly_provider as scholarly_provider
from .scope import Pushed as Pushed
from .scope import Scope as Scope
from .scope import Scoped as Scoped
from .scope import apply_scope as apply_scope
from .scope import outside as outside
from .scope import outside_window as outside_window
from .scope import parse_day as parse_day
from .scope import parse_scope as parse_scope
from .settings import ScholarlySettings as ScholarlySettings

__all__ = [
    "KNOWN_SOURCES",
    "SCHOLARLY_SOURCES",
    "SYSTEM_CLOCK",
    "Clock",
    "CrossrefProvider",
    "Found",
    "PagedProvider",
    "Pushed",
    "ScholarlyHit",
    "ScholarlyProvider",
    "ScholarlySettings",
    "Scope",
    "Scoped",
    "apply_scope",
    "date_span",
    "from_web_hit",
    "outside",
    "outside_window",
    "parse_day",
    "parse_scope",
    "parse_sources",
    "scholarly_provider",
]
