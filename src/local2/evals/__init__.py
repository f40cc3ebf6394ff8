"""Measuring answers (``local2 eval``, DESIGN §14): question sets, grading, statistics,
evidence recall and run folders, as pure parts the service's runner puts together.

- :mod:`.sets` and :mod:`.readers`: a set read from a path (SimpleQA CSV, JSON lines,
  HotpotQA JSON, a folder of documents with questions), and the questions a run picks;
- :mod:`.grading`: the grader's prompt, its version, and a reply read without guessing;
- :mod:`.scoring`: exact match, token F1 and "contains the gold", SQuAD-normalised;
- :mod:`.evidence`: which gold evidence reached the model, and why a wrong answer was wrong;
- :mod:`.stats`: Wilson intervals, exact McNemar, and words that never call noise a win;
- :mod:`.results`: a question's record, a run's summary, two runs compared;
- :mod:`.store`: run folders (manifest, results JSON lines, CSV), safe to resume.

The shipped demo set (``demo/``) is a folder set: ``load_set(set_path("demo"))``.
"""

from local2.evals.evidence import Reached, diagnose, evidence_recall, reached_from_turn
from local2.evals.grading import (
    NUDGE,
    PROMPT,
    PROMPT_VERSION,
    Asker,
    GraderVerdict,
    grade_answer,
    grade_prompt,
    parse_grade_reply,
)
from local2.evals.readers import load_set
from local2.evals.results import (
    answered,
    compare,
    correctness,
    disagrees,
    failed,
    latest,
    summarize,
)
from local2.evals.scoring import best_f1, contains_gold, exact_match, normalize_answer, token_f1
from local2.evals.sets import DEMO, DEMO_PATH, Question, QuestionSet, format_of, select, set_path
from local2.evals.stats import (
    Paired,
    mcnemar_exact,
    pair,
    rate,
    say_difference,
    say_rate,
    wilson,
)
from local2.evals.store import EvalRun, RunStore, make_manifest, new_run_id

__all__ = [
    "DEMO",
    "DEMO_PATH",
    "NUDGE",
    "PROMPT",
    "PROMPT_VERSION",
    "Asker",
    "EvalRun",
    "GraderVerdict",
    "Paired",
    "Question",
    "QuestionSet",
    "Reached",
    "RunStore",
    "answered",
    "best_f1",
    "compare",
    "contains_gold",
    "correctness",
    "diagnose",
    "disagrees",
    "evidence_recall",
    "exact_match",
    "failed",
    "format_of",
    "grade_answer",
    "grade_prompt",
    "latest",
    "load_set",
    "make_manifest",
    "mcnemar_exact",
    "new_run_id",
    "normalize_answer",
    "pair",
    "parse_grade_reply",
    "rate",
    "reached_from_turn",
    "say_difference",
    "say_rate",
    "select",
    "set_path",
    "summarize",
    "token_f1",
    "wilson",
]
