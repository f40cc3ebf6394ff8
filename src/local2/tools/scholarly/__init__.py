"""Scholarly sources (issue 56): arXiv, PubMed, Semantic Scholar, OpenAlex,
Crossref and Wikipedia, each through its documented public API, with typed hits that carry
what a citation needs, and a run's scope in time and place.

- :mod:`.hit`: :class:`ScholarlyHit`, a web ``SearchHit`` with its bibliographic record;
- :mod:`.scope`: ``--since/--until/--domains/--exclude-domains`` parsed, and applied to hits;
- :mod:`.client`: the one HTTP client (deadline, byte cap, no environment proxy, one call at
  a time per host with the API's pause, one retry after a 429/5xx/unreadable answer);
- :mod:`.base`: the provider protocol and the paging loop; one module per provider;
- :mod:`.named`: the source names a run accepts (``--sources``), and providers by name;
- :mod:`.settings`: their settings, until the settings schema takes them.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.tools.scholarly.base import Found as Found
    from local2.tools.scholarly.base import PagedProvider as PagedProvider
    from local2.tools.scholarly.base import ScholarlyProvider as ScholarlyProvider
    from local2.tools.scholarly.client import SYSTEM_CLOCK as SYSTEM_CLOCK
    from local2.tools.scholarly.client import Clock as Clock
    from local2.tools.scholarly.crossref import CrossrefProvider as CrossrefProvider
    from local2.tools.scholarly.hit import ScholarlyHit as ScholarlyHit
    from local2.tools.scholarly.hit import date_span as date_span
    from local2.tools.scholarly.hit import from_web_hit as from_web_hit
    from local2.tools.scholarly.named import KNOWN_SOURCES as KNOWN_SOURCES
    from local2.tools.scholarly.named import SCHOLARLY_SOURCES as SCHOLARLY_SOURCES
    from local2.tools.scholarly.named import parse_sources as parse_sources
    from local2.tools.scholarly.named import scholarly_provider as scholarly_provider
    from local2.tools.scholarly.scope import Pushed as Pushed
    from local2.tools.scholarly.scope import Scope as Scope
    from local2.tools.scholarly.scope import Scoped as Scoped
    from local2.tools.scholarly.scope import apply_scope as apply_scope
    from local2.tools.scholarly.scope import outside as outside
    from local2.tools.scholarly.scope import parse_scope as parse_scope
    from local2.tools.scholarly.settings import ScholarlySettings as ScholarlySettings
else:
    __getattr__ = lazy_face(__name__, __file__)
