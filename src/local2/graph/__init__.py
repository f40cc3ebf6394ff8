"""The chat turn as a LangGraph graph (a feature: docs/architecture.md).

- :mod:`.topology`: the graph, declared once like the transition table it comes from;
- :mod:`.loop`: the answer loop (generate, approve, dispatch_tool, await_tool);
- :mod:`.nodes`: one small function per node, ``(state, services[, config]) -> update``;
- :mod:`.compare`: two respondents answering one question;
- :mod:`.state`: the state schema; :mod:`.services`: what nodes are given;
- :mod:`.payload`: the turn payload built from the state; :mod:`.prompt`: the prompt window;
- :mod:`.branches`: which checkpoint a session continues from; :mod:`.pool`: one thread pool
  for every run;
- :mod:`.owed` and :mod:`.late_grades`: a grade that gave way to the next question, owed and
  given later.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
