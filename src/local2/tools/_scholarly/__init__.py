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

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
