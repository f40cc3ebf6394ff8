"""Measuring answers (``local2 eval``, docs/evals.md): question sets, grading, statistics,
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

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.evals.evidence import Reached as Reached
    from local2.evals.evidence import diagnose as diagnose
    from local2.evals.evidence import evidence_recall as evidence_recall
    from local2.evals.evidence import reached_from_turn as reached_from_turn
    from local2.evals.grading import MATCH as MATCH
    from local2.evals.grading import MATCH_RULE as MATCH_RULE
    from local2.evals.grading import MATCH_VERSION as MATCH_VERSION
    from local2.evals.grading import NUDGE as NUDGE
    from local2.evals.grading import PROMPT as PROMPT
    from local2.evals.grading import PROMPT_VERSION as PROMPT_VERSION
    from local2.evals.grading import Asker as Asker
    from local2.evals.grading import GraderVerdict as GraderVerdict
    from local2.evals.grading import grade_answer as grade_answer
    from local2.evals.grading import grade_prompt as grade_prompt
    from local2.evals.grading import match_grade as match_grade
    from local2.evals.grading import parse_grade_reply as parse_grade_reply
    from local2.evals.readers import load_set as load_set
    from local2.evals.results import answered as answered
    from local2.evals.results import compare as compare
    from local2.evals.results import correctness as correctness
    from local2.evals.results import disagrees as disagrees
    from local2.evals.results import failed as failed
    from local2.evals.results import latest as latest
    from local2.evals.results import summarize as summarize
    from local2.evals.scoring import best_f1 as best_f1
    from local2.evals.scoring import contains_gold as contains_gold
    from local2.evals.scoring import exact_match as exact_match
    from local2.evals.scoring import normalize_answer as normalize_answer
    from local2.evals.scoring import token_f1 as token_f1
    from local2.evals.sets import DEMO as DEMO
    from local2.evals.sets import DEMO_PATH as DEMO_PATH
    from local2.evals.sets import Question as Question
    from local2.evals.sets import QuestionSet as QuestionSet
    from local2.evals.sets import format_of as format_of
    from local2.evals.sets import select as select
    from local2.evals.sets import set_path as set_path
    from local2.evals.stats import Paired as Paired
    from local2.evals.stats import mcnemar_exact as mcnemar_exact
    from local2.evals.stats import pair as pair
    from local2.evals.stats import percent as percent
    from local2.evals.stats import rate as rate
    from local2.evals.stats import say_difference as say_difference
    from local2.evals.stats import say_duration as say_duration
    from local2.evals.stats import say_rate as say_rate
    from local2.evals.stats import short_rate as short_rate
    from local2.evals.stats import wilson as wilson
    from local2.evals.store import EvalRun as EvalRun
    from local2.evals.store import RunStore as RunStore
    from local2.evals.store import make_manifest as make_manifest
    from local2.evals.store import new_run_id as new_run_id
else:
    __getattr__ = lazy_face(__name__, __file__)
