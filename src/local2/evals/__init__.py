"""Measuring answers (``local2 eval``, docs/evals.md): question sets, grading, statistics,
evidence recall and run folders, as pure parts the service's runner puts together.

- :mod:`._sets` and :mod:`._readers`: a set read from a path (SimpleQA CSV, JSON lines,
  HotpotQA JSON, a folder of documents with questions), and the questions a run picks;
- :mod:`._grading`: the grader's prompt, its version, and a reply read without guessing;
- :mod:`._scoring`: exact match, token F1 and "contains the gold", SQuAD-normalised;
- :mod:`._evidence`: which gold evidence reached the model, and why a wrong answer was wrong;
- :mod:`._stats`: Wilson intervals, exact McNemar, and words that never call noise a win;
- :mod:`._results`: a question's record, a run's summary, two runs compared;
- :mod:`._store`: run folders (manifest, results JSON lines, CSV), safe to resume.

The shipped demo set (``demo/``) is a folder set: ``load_set(set_path("demo"))``.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
