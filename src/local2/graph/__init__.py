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

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Critic": "local2.graph.services",
    "LateGrade": "local2.graph.late_grades",
    "RESET": "local2.graph.state",
    "RESPONDENT_IDS": "local2.graph.state",
    "RecallAhead": "local2.graph.recall",
    "Services": "local2.graph.services",
    "TurnContext": "local2.graph.context",
    "TurnGraph": "local2.graph.topology",
    "TurnState": "local2.graph.state",
    "TurnUpdate": "local2.graph.state",
    "branches": "local2.graph.branches",
    "build_prompt": "local2.graph.prompt",
    "call_model": "local2.graph.model_call",
    "compare_spec": "local2.graph.compare.spec",
    "compile_graph": "local2.graph.topology",
    "contextual": "local2.graph.context",
    "event": "local2.graph.emit",
    "grade_turn": "local2.graph.grading",
    "judge_late": "local2.graph.late_grades",
    "keep_late": "local2.graph.late_grades",
    "landing": "local2.graph.late_grades",
    "prompt_as_json": "local2.graph.prompt",
    "pairwise_verdict": "local2.graph.payload",
    "push": "local2.graph.emit",
    "recall_ahead": "local2.graph.recall",
    "record_vote": "local2.graph.compare.votes",
    "remember_turn": "local2.graph.remember",
    "respondent_view": "local2.graph.compare.pair",
    "turn_list": "local2.graph.state",
    "turn_payload": "local2.graph.payload",
    "unusable_reason": "local2.graph.answer_guard",
    "validate_query": "local2.graph.question",
    "votes_of": "local2.graph.compare.votes",
    "without_listing_lines": "local2.graph.answer_guard",
}
__getattr__ = lazy_face(__name__, _FACE)

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
    "unusable_reason",
    "validate_query",
    "votes_of",
    "without_listing_lines",
]
