"""Research mode: plan, execute, replan, reflect, compose, verify (docs/architecture.md).

:mod:`._graph` declares the graph; :class:`local2.service.research.Research` runs, resumes and
lists runs for the CLI, the HTTP API and the app; ``local2.build_research_graph(settings)`` is
the graph for notebooks. The modules are the package's own, one idea each: a run's records
(:mod:`._state`), the plan (:mod:`._plan`), the planning nodes and the person's pauses and
says (:mod:`._planner`), what the model is asked (:mod:`._prompts`), running the steps
(:mod:`._execute`), holding the report to its sources (:mod:`._verify`), and the end of a
round and of a run (:mod:`._report`). This face is what other packages use.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
