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

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.graph import branches as branches
    from local2.graph.answer_guard import unusable_reason as unusable_reason
    from local2.graph.answer_guard import without_listing_lines as without_listing_lines
    from local2.graph.compare.pair import respondent_view as respondent_view
    from local2.graph.compare.spec import compare_spec as compare_spec
    from local2.graph.compare.votes import record_vote as record_vote
    from local2.graph.compare.votes import votes_of as votes_of
    from local2.graph.context import TurnContext as TurnContext
    from local2.graph.context import contextual as contextual
    from local2.graph.emit import event as event
    from local2.graph.emit import push as push
    from local2.graph.grading import grade_turn as grade_turn
    from local2.graph.late_grades import LateGrade as LateGrade
    from local2.graph.late_grades import judge_late as judge_late
    from local2.graph.late_grades import keep_late as keep_late
    from local2.graph.late_grades import landing as landing
    from local2.graph.model_call import call_model as call_model
    from local2.graph.payload import pairwise_verdict as pairwise_verdict
    from local2.graph.payload import turn_payload as turn_payload
    from local2.graph.payload import turn_record as turn_record
    from local2.graph.prompt import build_prompt as build_prompt
    from local2.graph.prompt import prompt_as_json as prompt_as_json
    from local2.graph.question import validate_query as validate_query
    from local2.graph.recall import RecallAhead as RecallAhead
    from local2.graph.recall import recall_ahead as recall_ahead
    from local2.graph.remember import remember_turn as remember_turn
    from local2.graph.services import Critic as Critic
    from local2.graph.services import Services as Services
    from local2.graph.state import RESET as RESET
    from local2.graph.state import RESPONDENT_IDS as RESPONDENT_IDS
    from local2.graph.state import TurnState as TurnState
    from local2.graph.state import TurnUpdate as TurnUpdate
    from local2.graph.state import turn_list as turn_list
    from local2.graph.topology import TurnGraph as TurnGraph
    from local2.graph.topology import compile_graph as compile_graph
else:
    __getattr__ = lazy_face(__name__, __file__)
