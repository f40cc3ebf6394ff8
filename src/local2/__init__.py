"""LoCAL2: a local-first research assistant you can see inside.

The notebook API: ``load_settings()``, ``build_graph(settings, ...)`` (invoking the graph
with a ``thread_id`` is one turn of that session), ``build_research_graph(settings, ...)``
and :class:`Agent` (turns, history, replay, ratings as one object). All are imported on
first use, so ``import local2`` stays cheap. How the package is laid out:
``docs/architecture.md``.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

__version__ = "0.1.0"

if TYPE_CHECKING:
    from local2.config import load_settings as load_settings
    from local2.service import Agent as Agent
    from local2.service import build_graph as build_graph
    from local2.service import build_research_graph as build_research_graph
else:
    __getattr__ = lazy_face(__name__, __file__)
