"""The chat turn as a LangGraph graph (a feature: docs/architecture.md).

- :mod:`._graph`: the graph, declared once like the transition table it comes from, the one
  thread pool for every run, and a grade that gave way to the next question, given later;
- :mod:`._turn`: what a turn is (state, services, context, events) and what it brings to the
  model before it answers (``receive``: the question checked, memory recalled, attached
  documents), and the turn remembered after;
- :mod:`._answer`: the answer loop (generate, approve, dispatch_tool, await_tool), the prompt
  window, the model call and the guard on its reply;
- :mod:`._after`: publish and the turn payload, the critic's grade (or owed), ingest, retry;
- :mod:`._compare`: two respondents answering one question;
- :mod:`.branches`: which checkpoint a session continues from.

The modules are the graph's own; this face is what other packages use.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
