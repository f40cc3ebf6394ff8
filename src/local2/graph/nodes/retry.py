"""The critic in the loop: a second attempt at a low-graded answer (docs/architecture.md, "A turn's
path").

When the critic grades an answer at or below ``critic.retry_below``, ``critique`` emits
``critique.retry_offered``. A retry is a turn whose context carries
``retry`` (:class:`~local2.contracts._turn.FirstAttempt`: its turn, answer and critique):

```
receive -> retry_context -> generate ... publish -> critique -> settle_retry
```
- ``retry_context`` puts the turn back on the history the first attempt answered from, and
  shows the model its first answer and the critique, asking for a better one;
- ``publish`` then appends the second attempt beside the first in the turn log (both are
  kept), and the critic grades it;
- ``settle_retry`` keeps the higher-graded attempt as the one the session continues from
  (the second on a tie). The person can switch (:meth:`local2.service.chat.Ratings.show`).
  A grade that gave way to the person's next question keeps the second attempt, the one
  they saw, until it is given (:mod:`local2.graph.late_grades` settles it then, if the
  session has not moved on).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import Retry
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.state import TurnState, TurnUpdate

RETRY_NOTE = (
    "A reviewer graded your answer above {score}/5 for the question before it. Their "
    "feedback:\n{feedback}\n\nAnswer the question again, better: fix what the feedback "
    "points out (use the tools if facts need checking). Reply with the new answer only; do "
    "not mention the review."
)


def retry_context(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    first = runtime.context.retry
    if first is None:  # a replay of a retry's first step: nothing to try again
        return {}
    query_id = state["query_id"]
    note = RETRY_NOTE.format(
        score=first.get("score"), feedback=(first.get("feedback") or "(none)").strip()
    )
    started = event(
        state,
        events.RETRY_STARTED,
        query_id=query_id,
        of=first.get("query_id"),
        score=first.get("score"),
    )
    return {
        "messages": [
            AIMessage(first.get("answer") or "", id=f"retry-first-{query_id}"),
            HumanMessage(note, id=f"retry-note-{query_id}"),
        ],
        # The history the first attempt answered from: publish appends beside it.
        "history_head": first.get("parent_id"),
        "turn_count": max(0, state.get("turn_count", 0) - 1),
        "retry": {
            "query_id": query_id,
            "of": first.get("query_id"),
            "first": {
                "turn_id": first.get("turn_id"),
                "answer": first.get("answer"),
                "score": first.get("score"),
                "feedback": first.get("feedback"),
                "model": first.get("model"),
            },
            "shown": 2,
        },
        "event_log": [started],
    }


def _rank(score: int | None) -> int:
    return -1 if score is None else int(score)


def settle_retry(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    """Keep the higher-graded attempt in the history (the second one on a tie)."""
    return settle(state)


def settle(state: TurnState | Mapping[str, Any]) -> TurnUpdate:
    """Which attempt the history continues from, by their grades; the second while its grade
    is owed (it gave way to the next question)."""
    retry: Retry = {**(state.get("retry") or {})}
    first = retry.get("first")
    first_score, first_turn = (first.get("score"), first.get("turn_id")) if first else (None, None)
    second_score = (state.get("critique") or {}).get("score")
    owed = state.get("query_id") in (state.get("pending_grades") or {})
    retry["second"] = {"turn_id": state.get("history_head"), "score": second_score}
    if owed or _rank(first_score) <= _rank(second_score) or not first_turn:
        return {"retry": {**retry, "shown": 2}}
    switched = event(
        state,
        events.HISTORY_SWITCHED,
        query_id=state.get("query_id"),
        shown="attempt 1",
        turn_id=first_turn,
        by="critic",
        scores={"1": first_score, "2": second_score},
    )
    return {
        "retry": {**retry, "shown": 1},
        "history_head": first_turn,
        "event_log": [switched],
    }
