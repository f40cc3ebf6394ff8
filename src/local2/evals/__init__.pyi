from ._evidence import Reached as Reached
from ._evidence import diagnose as diagnose
from ._evidence import evidence_recall as evidence_recall
from ._evidence import reached_from_turn as reached_from_turn
from ._grading import MATCH as MATCH
from ._grading import MATCH_RULE as MATCH_RULE
from ._grading import MATCH_VERSION as MATCH_VERSION
from ._grading import NUDGE as NUDGE
from ._grading import PROMPT as PROMPT
from ._grading import PROMPT_VERSION as PROMPT_VERSION
from ._grading import Asker as Asker
from ._grading import GraderVerdict as GraderVerdict
from ._grading import grade_answer as grade_answer
from ._grading import grade_prompt as grade_prompt
from ._grading import match_grade as match_grade
from ._grading import parse_grade_reply as parse_grade_reply
from ._readers import load_set as load_set
from ._results import answered as answered
from ._results import compare as compare
from ._results import correctness as correctness
from ._results import disagrees as disagrees
from ._results import failed as failed
from ._results import latest as latest
from ._results import summarize as summarize
from ._scoring import best_f1 as best_f1
from ._scoring import contains_gold as contains_gold
from ._scoring import exact_match as exact_match
from ._scoring import normalize_answer as normalize_answer
from ._scoring import token_f1 as token_f1
from ._sets import DEMO as DEMO
from ._sets import DEMO_PATH as DEMO_PATH
from ._sets import Question as Question
from ._sets import QuestionSet as QuestionSet
from ._sets import format_of as format_of
from ._sets import select as select
from ._sets import set_path as set_path
from ._stats import Paired as Paired
from ._stats import mcnemar_exact as mcnemar_exact
from ._stats import pair as pair
from ._stats import percent as percent
from ._stats import rate as rate
from ._stats import say_difference as say_difference
from ._stats import say_duration as say_duration
from ._stats import say_rate as say_rate
from ._stats import short_rate as short_rate
from ._stats import wilson as wilson
from ._store import EvalRun as EvalRun
from ._store import RunStore as RunStore
from ._store import make_manifest as make_manifest
from ._store import new_run_id as new_run_id

__all__ = [
    "DEMO",
    "DEMO_PATH",
    "MATCH",
    "MATCH_RULE",
    "MATCH_VERSION",
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
    "match_grade",
    "mcnemar_exact",
    "new_run_id",
    "normalize_answer",
    "pair",
    "parse_grade_reply",
    "percent",
    "rate",
    "reached_from_turn",
    "say_difference",
    "say_duration",
    "say_rate",
    "select",
    "set_path",
    "short_rate",
    "summarize",
    "token_f1",
    "wilson",
]
