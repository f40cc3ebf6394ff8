from . import branches as branches
from ._after import grade_turn as grade_turn
from ._after import pairwise_verdict as pairwise_verdict
from ._after import turn_payload as turn_payload
from ._after import turn_record as turn_record
from ._answer import build_prompt as build_prompt
from ._answer import call_model as call_model
from ._answer import prompt_as_json as prompt_as_json
from ._answer import unusable_reason as unusable_reason
from ._answer import without_listing_lines as without_listing_lines
from ._compare import compare_spec as compare_spec
from ._compare import record_vote as record_vote
from ._compare import respondent_view as respondent_view
from ._compare import votes_of as votes_of
from ._graph import LateGrade as LateGrade
from ._graph import TurnGraph as TurnGraph
from ._graph import compile_graph as compile_graph
from ._graph import judge_late as judge_late
from ._graph import keep_late as keep_late
from ._graph import landing as landing
from ._turn import RESET as RESET
from ._turn import RESPONDENT_IDS as RESPONDENT_IDS
from ._turn import Critic as Critic
from ._turn import RecallAhead as RecallAhead
from ._turn import Services as Services
from ._turn import TurnContext as TurnContext
from ._turn import TurnState as TurnState
from ._turn import TurnUpdate as TurnUpdate
from ._turn import contextual as contextual
from ._turn import event as event
from ._turn import push as push
from ._turn import recall_ahead as recall_ahead
from ._turn import remember_turn as remember_turn
from ._turn import turn_list as turn_list
from ._turn import validate_query as validate_query

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
