from . import branches as branches
from .answer_guard import unusable_reason as unusable_reason
from .answer_guard import without_listing_lines as without_listing_lines
from .compare.pair import respondent_view as respondent_view
from .compare.spec import compare_spec as compare_spec
from .compare.votes import record_vote as record_vote
from .compare.votes import votes_of as votes_of
from .context import TurnContext as TurnContext
from .context import contextual as contextual
from .emit import event as event
from .emit import push as push
from .grading import grade_turn as grade_turn
from .late_grades import LateGrade as LateGrade
from .late_grades import judge_late as judge_late
from .late_grades import keep_late as keep_late
from .late_grades import landing as landing
from .model_call import call_model as call_model
from .payload import pairwise_verdict as pairwise_verdict
from .payload import turn_payload as turn_payload
from .payload import turn_record as turn_record
from .prompt import build_prompt as build_prompt
from .prompt import prompt_as_json as prompt_as_json
from .question import validate_query as validate_query
from .recall import RecallAhead as RecallAhead
from .recall import recall_ahead as recall_ahead
from .remember import remember_turn as remember_turn
from .services import Critic as Critic
from .services import Services as Services
from .state import RESET as RESET
from .state import RESPONDENT_IDS as RESPONDENT_IDS
from .state import TurnState as TurnState
from .state import TurnUpdate as TurnUpdate
from .state import turn_list as turn_list
from .topology import TurnGraph as TurnGraph
from .topology import compile_graph as compile_graph

__all__ = [
    "RESET",
    "RESPONDENT_IDS",
    "Critic",
    "LateGrade",
    "RecallAhead",
    "Services",
    "TurnContext",
    "TurnGraph",
    "TurnState",
    "TurnUpdate",
    "branches",
    "build_prompt",
    "call_model",
    "compare_spec",
    "compile_graph",
    "contextual",
    "event",
    "grade_turn",
    "judge_late",
    "keep_late",
    "landing",
    "pairwise_verdict",
    "prompt_as_json",
    "push",
    "recall_ahead",
    "record_vote",
    "remember_turn",
    "respondent_view",
    "turn_list",
    "turn_payload",
    "turn_record",
    "unusable_reason",
    "validate_query",
    "votes_of",
    "without_listing_lines",
]
