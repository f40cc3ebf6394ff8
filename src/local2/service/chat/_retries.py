"""A second attempt at a low-graded answer, and the person's switch between the attempts.

Only the session's last answer, graded by the critic, can be tried again; the retry is a turn
whose model sees the critique (:mod:`local2.graph._after`). Both attempts are kept in
the turn log; the better-graded one continues the session, and the person may switch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from local2 import events
from local2.contracts import (
    LOCAL,
    Approver,
    AttemptShown,
    FirstAttempt,
    Person,
    StreamItem,
    TurnOptions,
)
from local2.errors import CannotRetry, InvalidInput, UnknownTurn
from local2.graph import Services, TurnGraph, event
from local2.ids import check_session_id
from local2.service.chat._running import Turns
from local2.service.chat._sessions import SessionReader
from local2.service.chat._turns import TurnRunner


@dataclass(eq=False)
class Retries:
    """Second attempts: what to ask again, and which attempt the session continues from."""

    services: Services
    graph: TurnGraph
    running: Turns
    reader: SessionReader
    turns: TurnRunner

    def retry(
        self,
        session_id: str,
        query_id: str,
        approve: Approver | None = None,
        person: Person = LOCAL,
    ) -> Iterator[StreamItem]:
        """Try ``query_id`` again with its critique as context: a turn of ``person``'s,
        streamed like one."""
        session_id = check_session_id(session_id)  # once, for the request and the turn
        query, first = self.retry_request(session_id, query_id)
        options = TurnOptions(retry=first)
        return self.turns.stream(query, session_id, approve, options=options, person=person)

    def retry_request(self, session_id: str, query_id: str) -> tuple[str, FirstAttempt]:
        """The question and the ``retry`` config for a second attempt at ``query_id``.

        Only the session's last answer, graded by the critic, and not itself a second attempt.
        """
        values = dict(self.reader.head_or_unknown(session_id).values)
        turn_log = self.services.turn_log
        if values.get("query_id") != query_id:
            if turn_log.find(session_id, query_id) is None:
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
        turns = turn_log.window(values.get("history_head"), 1)
        if not turns or turns[-1].query_id != query_id:
            raise CannotRetry("That answer is not the one the session continues from.")
        first: FirstAttempt = {
            "query_id": query_id,
            "turn_id": turns[-1].id,
            "parent_id": turns[-1].parent_id,
            "answer": values.get("answer") or turns[-1].assistant,
            "score": critique.get("score"),
            "feedback": critique.get("feedback") or "",
            "model": values.get("model"),
        }
        return values.get("query") or turns[-1].user, first

    def show(self, session_id: str, query_id: str, attempt: int) -> AttemptShown:
        """Continue the session from attempt 1 or 2 of a retried answer (the person's switch)."""
        if attempt not in (1, 2):
            raise InvalidInput(f"An attempt is 1 or 2, got {attempt!r}.")
        session_id = check_session_id(session_id)  # before its lock is taken
        with self.running.hold(session_id):
            head = self.reader.head_or_unknown(session_id)
            values = dict(head.values)
            retry = dict(values.get("retry") or {})
            if query_id not in (retry.get("query_id"), retry.get("of")) or values.get(
                "query_id"
            ) != retry.get("query_id"):
                raise UnknownTurn(
                    f"Turn '{query_id}' is not the session's last retried answer: "
                    "nothing to switch."
                )
            chosen = (retry.get("first") if attempt == 1 else retry.get("second")) or {}
            turn_id = chosen.get("turn_id")
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
            self.graph.update_state(
                head.config,
                {"history_head": turn_id, "retry": {**retry, "shown": attempt}, "event_log": log},
                as_node="settle_retry",
            )
        return {"session_id": session_id, "query_id": query_id, "shown": attempt, "events": log}
