"""Grading an answered turn: the chat graph's ``critique`` node and research's both grade
here, flag ungrounded citations and annotate the engram.

Runs after ``publish`` beside ``ingest``. It can only add information: a disabled critic
emits nothing, and a judge that fails or times out yields ``score: None``, never an error.
Two halves: :func:`judge_turn` asks the judge (seconds, and it may give way to the person's
next question, :class:`~local2.errors.GaveWay`), :func:`record_grade` keeps the grade (the
event, the engram's score, the turn log's note: milliseconds); a grade given after the next
question (:mod:`local2.graph.late_grades`) is the same two halves, apart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from local2 import events
from local2.contracts import Critique
from local2.graph.attached import attached_evidence
from local2.graph.emit import event
from local2.graph.services import Services
from local2.graph.state import TurnState, TurnUpdate
from local2.models import Cancellation

log = logging.getLogger(__name__)

# A critic that may give way asks the judge this long after the answer went out: a question
# already on its way (a script's, a quick follow-up) comes first, and no grading request is
# started only to be cancelled milliseconds later.
ASK_AFTER_S = 0.05


def memory_lookup(
    state: TurnState | Mapping[str, Any], services: Services
) -> Callable[[str], bool] | None:
    """Whether an engram id exists: recalled this turn, or found in the turn's owner's
    memory (someone else's engram is as unknown as an invented id)."""
    recalled = {hit["id"] for hit in state.get("memory_hits") or []}
    get = getattr(services.memory_for(state.get("owner")), "get", None)
    if get is None:
        return recalled.__contains__ if recalled else None
    return lambda memory_id: memory_id in recalled or get(memory_id) is not None


def told(state: TurnState | Mapping[str, Any]) -> str:
    """What the model was told this turn besides tool results: memories recalled, and the
    words of the turn's messages (a figure from there is not an invention). Tool messages
    are left out: their results are the evidence, read already."""
    memories = [str(h.get("content") or "") for h in state.get("memory_hits") or []]
    said = [
        m.content
        for m in state.get("messages") or []
        if m.type != "tool" and isinstance(m.content, str)
    ]
    return "\n".join([*memories, *said])


def grade_turn(
    state: TurnState, services: Services, give_way: Cancellation | None = None
) -> TurnUpdate:
    """Grade the turn and keep the grade; :class:`~local2.errors.GaveWay` when ``give_way``
    is set before the judge has answered (nothing kept: grade it later)."""
    if services.critic is None:
        return {}
    let_others_first(give_way)
    return record_grade(state, services, judge_turn(state, services, give_way))


def let_others_first(give_way: Cancellation | None) -> None:
    """Before asking the judge, wait :data:`ASK_AFTER_S` for a question already on its way:
    :class:`~local2.errors.GaveWay` if one comes."""
    if give_way is not None and give_way.wait(ASK_AFTER_S):
        give_way.check("the critic")


def judge_turn(
    state: TurnState | Mapping[str, Any], services: Services, give_way: Cancellation | None = None
) -> Critique:
    """The judge's critique of the turn's answer (the critic must be on)."""
    assert services.critic is not None
    answer = state.get("answer") or ""
    if not answer.strip():
        return {"score": None, "feedback": "no answer to grade", "flags": []}
    try:
        return services.critic.grade(
            state["query"],
            answer,
            # the attached documents' passages were read too (graph/attached.py)
            [*(state.get("tool_calls") or []), *attached_evidence(state)],
            memory_lookup(state, services),
            listing_tools=services.listing_tools(),
            context=told(state),
            cancel=give_way,
        )
    except Exception as exc:  # Critic.grade should not raise; the turn must not break
        return {"score": None, "feedback": f"critic failed: {exc}"[:300], "flags": []}


def record_grade(
    state: TurnState | Mapping[str, Any],
    services: Services,
    result: Critique,
    *,
    late: bool = False,
) -> TurnUpdate:
    """Keep ``result`` as the turn's grade: ``critique.result`` (``late``: given after the
    session's next question), the engram's critic score, the turn log's note; the state
    update, with ``critique.retry_offered`` for a low grade of an answer still offered."""
    query_id = state.get("query_id")
    said: dict[str, bool] = {"late": True} if late else {}
    entry = event(
        state,
        events.CRITIQUE_RESULT,
        score=result.get("score"),
        feedback=result.get("feedback", ""),
        flags=list(result.get("flags", [])),
        query_id=query_id,
        session_id=state.get("session_id"),
        **said,
    )
    store = services.memory_for(state.get("owner"))
    if store is not None and result.get("score") is not None and query_id:
        try:
            store.annotate(query_id, critic_score=result["score"])
        except Exception:
            log.warning("could not annotate engram of %s with the critic score", query_id)
    if state.get("history_head"):  # so a resumed session shows each turn's grade
        services.turn_log.note(str(state["history_head"]), "critique", dict(result))
    return {"critique": result, "event_log": [entry, *offer(state, services, result)]}


def offer(state: TurnState | Mapping[str, Any], services: Services, result: Critique) -> list[Any]:
    """``critique.retry_offered`` when the grade is at or below the threshold (not for a
    turn that is itself a retry: two attempts are the most offered)."""
    threshold = services.settings.critic.retry_below
    score = result.get("score")
    retry = state.get("retry") or {}
    if score is None or score > threshold or retry.get("query_id") == state.get("query_id"):
        return []
    return [
        event(
            state,
            events.RETRY_OFFERED,
            query_id=state.get("query_id"),
            session_id=state.get("session_id"),
            score=score,
            threshold=threshold,
        )
    ]
