"""LoCAL2: a local-first research assistant you can see inside.

The notebook API: ``load_settings()``, ``build_graph(settings, ...)`` (invoking the graph
with a ``thread_id`` is one turn of that session), ``build_research_graph(settings, ...)``
and :class:`Agent` (turns, history, replay, ratings as one object). All are imported on
first use, so ``import local2`` stays cheap. How the package is laid out:
``docs/architecture.md``.
"""

__version__ = "0.1.0"

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
