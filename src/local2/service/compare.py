"""What a person does after a compare or low-graded turn: prefer, retry, switch.

All three change which answer the session continues from, and nothing else: the turn log
only ever grows (a preferred ``b`` answer is appended beside ``a``'s, a retry beside the
first attempt), and the state's ``history_head`` moves to the chosen turn in a new
checkpoint, so every answer stays inspectable and every earlier checkpoint replayable.
The head moves only while that turn is the session's last one; a preference given later
is still recorded (an arena vote, the engrams' ``pairwise_winner``), and says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from local2 import events
from local2.errors import CannotRetry
from local2.graph.compare.spec import RESPONDENT_IDS
from local2.graph.nodes.common import Services, event
from local2.graph.payload import turn_payload
from local2.graph.state import TurnState

if TYPE_CHECKING:
    from local2.service.agent import Agent

PREFERENCES = ("a", "b", "tie")


def votes_of(services: Services) -> Any:
    """The arena's vote log, opened on first use."""
    if services.votes is None:
        from local2.storage.votes import open_votes

        services.votes = open_votes(services.settings)
    return services.votes


def record_vote(services: Services, state: TurnState | dict, voter: str, winner: str) -> None:
    pairwise = state.get("pairwise") or {}
    labels = {rid: s.get("label") or "" for rid, s in (pairwise.get("specs") or {}).items()}
    votes_of(services).record(
        session_id=state.get("session_id") or "",
        query_id=pairwise.get("query_id") or state.get("query_id") or "",
        voter=voter,  # type: ignore[arg-type]
        model_a=labels.get("a", ""),
        model_b=labels.get("b", ""),
        winner=winner,
    )


def _head(agent: Agent, session_id: str) -> Any:
    """The checkpoint the session continues from (never a dead turn's leftover)."""
    from local2.errors import UnknownTurn

    snapshot = agent._head(session_id)
    if snapshot is None or not snapshot.values:
        raise UnknownTurn(f"No session '{session_id}'")
    return snapshot


def _turn_record(view: dict[str, Any]) -> dict[str, Any]:
    payload = turn_payload(view)
    return {k: v for k, v in payload.items() if k not in ("query", "answer")}


def _mark_engrams(services: Services, records: dict[str, Any], **fields: Any) -> int | None:
    """Mark both respondents' engrams; None when memory is not open here and the marks wait
    for it (:mod:`local2.memory.deferred`)."""
    from local2.memory import deferred

    counts = [
        deferred.mark(services.memory, services.settings, engram, **fields)
        for engram in ((records.get(rid) or {}).get("engram_id") for rid in RESPONDENT_IDS)
        if engram
    ]
    return None if None in counts else sum(c or 0 for c in counts)


def _preference_event(
    clock: dict[str, float], session_id: str, query_id: str, preferred: str, comment: str | None
) -> Any:
    """``user.feedback`` saying which answer the person prefers (no rating)."""
    return event(
        clock,
        events.USER_FEEDBACK,
        session_id=session_id,
        query_id=query_id,
        preferred=preferred,
        comment=comment,
        respondent_id=None,
    )


def prefer(
    agent: Agent, session_id: str, query_id: str, preferred: str, comment: str | None = None
) -> dict[str, Any]:
    """The person's verdict on a compare turn: ``a``, ``b`` or ``tie``.

    The preferred answer continues the session's history (a tie keeps the one shown); the
    vote counts in the arena and marks both engrams' ``pairwise_winner``.
    """
    from local2.errors import UnknownTurn
    from local2.graph.compare.pair import respondent_view

    if preferred not in PREFERENCES:
        raise ValueError(f"A preference is one of a, b or tie, got {preferred!r}.")
    services = agent.services
    with agent._session_lock(session_id):
        head = _head(agent, session_id)
        values: dict[str, Any] = dict(head.values)
        pairwise = dict(values.get("pairwise") or {})
        if query_id != pairwise.get("query_id") or query_id != values.get("query_id"):
            return _prefer_earlier(agent, session_id, query_id, preferred, comment)
        records = values.get("respondents") or {}
        shown = pairwise.get("shown") or "a"
        target = shown if preferred == "tie" else preferred
        if not (records.get(target) or {}).get("answer"):
            raise UnknownTurn(f"Respondent {target} gave no answer in turn '{query_id}'.")
        now = {"started_at": time.time()}
        log = [_preference_event(now, session_id, query_id, preferred, comment)]
        update: dict[str, Any] = {}
        if target != shown:
            turn_id = records[target].get("turn_id")
            if not turn_id:  # first time this answer continues: append it beside the other
                view = respondent_view(values, target)  # type: ignore[arg-type]
                turn_id = services.turn_log.append(
                    parent_id=pairwise.get("parent_head"),
                    session_id=session_id,
                    query_id=query_id,
                    user=values.get("query") or "",
                    assistant=records[target]["answer"],
                    record={**_turn_record(view), "respondent_id": target},
                )
                if records[target].get("critique"):  # so a resumed session shows its grade
                    services.turn_log.note(turn_id, "critique", dict(records[target]["critique"]))
            chosen = records[target]
            update = {
                "history_head": turn_id,
                "answer": chosen.get("answer"),
                "model": chosen.get("model"),
                "backend": chosen.get("backend"),
                "critique": chosen.get("critique"),
                "respondents": {target: {"turn_id": turn_id}},
            }
            log.append(
                event(
                    now,
                    events.HISTORY_SWITCHED,
                    query_id=query_id,
                    shown=target,
                    turn_id=turn_id,
                    by="person",
                    respondent_id=target,
                )
            )
        pairwise.update(preferred=preferred, shown=target)
        agent.graph.update_state(
            head.config, {**update, "pairwise": pairwise, "event_log": log}, as_node="settle_pair"
        )
        record_vote(services, {**values, "pairwise": pairwise}, "person", preferred)
    marked = _mark_engrams(services, records, pairwise_winner=preferred, pairwise_by="person")
    return {
        "session_id": session_id,
        "query_id": query_id,
        "preferred": preferred,
        "continues": target,
        "continues_history": True,
        "engrams_annotated": marked,
        "events": log,
    }


def _prefer_earlier(
    agent: Agent, session_id: str, query_id: str, preferred: str, comment: str | None
) -> dict[str, Any]:
    """A preference on a compare turn that is no longer the last: recorded, history kept."""
    from local2.errors import UnknownTurn

    services = agent.services
    turn = services.turn_log.find(session_id, query_id)
    record = (turn.record or {}) if turn is not None else {}
    if turn is None:
        raise UnknownTurn(f"No turn '{query_id}' in session '{session_id}'")
    if not record.get("pairwise"):
        raise UnknownTurn(
            f"Turn '{query_id}' of session '{session_id}' was not a comparison: "
            "there is nothing to prefer (rate it with a rating instead)."
        )
    labels = record["pairwise"].get("models") or {}
    votes_of(services).record(
        session_id=session_id,
        query_id=query_id,
        voter="person",
        model_a=labels.get("a", ""),
        model_b=labels.get("b", ""),
        winner=preferred,
    )
    from local2.memory import deferred

    marked = deferred.mark(
        services.memory,
        services.settings,
        query_id=query_id,
        pairwise_winner=preferred,
        pairwise_by="person",
    )
    given = _preference_event({"started_at": time.time()}, session_id, query_id, preferred, comment)
    return {
        "session_id": session_id,
        "query_id": query_id,
        "preferred": preferred,
        "continues": None,
        "continues_history": False,
        "note": "Recorded; later turns already continue from the answer shown then.",
        "engrams_annotated": marked,
        "events": [given],
    }


def retry_request(agent: Agent, session_id: str, query_id: str) -> tuple[str, dict[str, Any]]:
    """The question and the ``retry`` config for a second attempt at ``query_id``.

    Only the session's last answer, graded by the critic, and not itself a second attempt.
    """
    from local2.errors import UnknownTurn

    values = dict(_head(agent, session_id).values)
    if values.get("query_id") != query_id:
        if agent.services.turn_log.find(session_id, query_id) is None:
            raise UnknownTurn(f"No turn '{query_id}' in session '{session_id}'")
        raise CannotRetry(
            "Only the session's last answer can be tried again; to redo an earlier one, "
            "replay from its checkpoint (local2 history, then local2 replay)."
        )
    if (values.get("pairwise") or {}).get("query_id") == query_id:
        raise CannotRetry("That turn compared two answers: prefer one of them instead.")
    if (values.get("retry") or {}).get("query_id") == query_id:
        raise CannotRetry("That answer is already a second attempt.")
    critique = values.get("critique") or {}
    if critique.get("score") is None:
        raise CannotRetry(
            "The critic has not graded that answer, so there is no feedback to retry with."
        )
    turns = agent.services.turn_log.window(values.get("history_head"), 1)
    if not turns or turns[-1].query_id != query_id:
        raise CannotRetry("That answer is not the one the session continues from.")
    first = {
        "query_id": query_id,
        "turn_id": turns[-1].id,
        "parent_id": turns[-1].parent_id,
        "answer": values.get("answer") or turns[-1].assistant,
        "score": critique.get("score"),
        "feedback": critique.get("feedback") or "",
        "model": values.get("model"),
    }
    return values.get("query") or turns[-1].user, first


def retry(
    agent: Agent, session_id: str, query_id: str, approve: Any = None
) -> Iterator[tuple[str, Any]]:
    """Try ``query_id`` again with its critique as context: a turn, streamed like one
    (``approve`` answers a tool call that waits for the person, as in :meth:`Agent.stream`)."""
    from local2.graph.nodes.retry import CONFIG_KEY

    query, first = retry_request(agent, session_id, query_id)
    yield from agent.stream(query, session_id, approve, options={CONFIG_KEY: first})


def show(agent: Agent, session_id: str, query_id: str, attempt: int) -> dict[str, Any]:
    """Continue the session from attempt 1 or 2 of a retried answer (the person's switch)."""
    from local2.errors import UnknownTurn

    if attempt not in (1, 2):
        raise ValueError(f"An attempt is 1 or 2, got {attempt!r}.")
    with agent._session_lock(session_id):
        head = _head(agent, session_id)
        values = dict(head.values)
        retry = dict(values.get("retry") or {})
        if query_id not in (retry.get("query_id"), retry.get("of")) or values.get(
            "query_id"
        ) != retry.get("query_id"):
            raise UnknownTurn(
                f"Turn '{query_id}' is not the session's last retried answer: nothing to switch."
            )
        turn_id = ((retry.get("first") if attempt == 1 else retry.get("second")) or {}).get(
            "turn_id"
        )
        if not turn_id:
            raise UnknownTurn(f"Attempt {attempt} of '{query_id}' has no answer to show.")
        log = [
            event(
                {"started_at": time.time()},
                events.HISTORY_SWITCHED,
                query_id=retry.get("query_id"),
                shown=f"attempt {attempt}",
                turn_id=turn_id,
                by="person",
            )
        ]
        agent.graph.update_state(
            head.config,
            {"history_head": turn_id, "retry": {**retry, "shown": attempt}, "event_log": log},
            as_node="settle_retry",
        )
    return {"session_id": session_id, "query_id": query_id, "shown": attempt, "events": log}
