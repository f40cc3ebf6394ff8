"""Research mode: plan, execute, replan, reflect, compose, verify (docs/architecture.md).

:mod:`.graph` declares the graph; :class:`local2.service.research.Research` runs, resumes and
lists runs for the CLI, the HTTP API and the app; ``local2.build_research_graph(settings)`` is
the graph for notebooks.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
