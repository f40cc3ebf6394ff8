from .evidence import Reached as Reached
from .evidence import diagnose as diagnose
from .evidence import evidence_recall as evidence_recall
from .evidence import reached_from_turn as reached_from_turn
from .grading import MATCH as MATCH
from .grading import MATCH_RULE as MATCH_RULE
from .grading import MATCH_VERSION as MATCH_VERSION
from .grading import NUDGE as NUDGE
from .grading import PROMPT as PROMPT
from .grading import PROMPT_VERSION as PROMPT_VERSION
from .grading import Asker as Asker
from .grading import GraderVerdict as GraderVerdict
from .grading import grade_answer as grade_answer
from .grading import grade_prompt as grade_prompt
from .grading import match_grade as match_grade
from .grading import parse_grade_reply as parse_grade_reply
from .readers import load_set as load_set
from .results import answered as answered
from .results import compare as compare
from .results import correctness as correctness
from .results import disagrees as disagrees
from .results import failed as failed
from .results import latest as latest
from .results import summarize as summarize
from .scoring import best_f1 as best_f1
from .scoring import contains_gold as contains_gold
from .scoring import exact_match as exact_match
from .scoring import normalize_answer as normalize_answer
from .scoring import token_f1 as token_f1
from .sets import DEMO as DEMO
from .sets import DEMO_PATH as DEMO_PATH
from .sets import Question as Question
from .sets import QuestionSet as QuestionSet
from .sets import format_of as format_of
from .sets import select as select
from .sets import set_path as set_path
from .stats import Paired as Paired
from .stats import mcnemar_exact as mcnemar_exact
from .stats import pair as pair
from .stats import percent as percent
from .stats import rate as rate
from .stats import say_difference as say_difference
from .stats import say_duration as say_duration
from .stats import say_rate as say_rate
from .stats import short_rate as short_rate
from .stats import wilson as wilson
from .store import EvalRun as EvalRun
from .store import RunStore as RunStore
from .store import make_manifest as make_manifest
from .store import new_run_id as new_run_id

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
