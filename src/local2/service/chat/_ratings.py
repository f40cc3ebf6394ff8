"""What a person says about an answer afterwards: a rating, or which of two answers is better.

A rating (1-5) becomes ``user.feedback`` then ``reward.event``: stored on the session's head
and on the turn, and given to the turn's engrams (now, or when memory next opens:
:mod:`local2.memory.deferred`). A preference between two compared answers changes which
answer the session continues from, and nothing else (as a second attempt does,
:mod:`local2.service.chat._retries`): the turn log only ever grows (a preferred ``b`` answer is
appended beside ``a``'s) and ``history_head`` moves in a new checkpoint, so every answer
stays inspectable and every earlier checkpoint replayable. The head moves only while that
turn is the session's last one; a preference given later is still recorded (an arena vote,
the engrams' ``pairwise_winner``), and says so.

Each waits for a running turn of the session, so it lands on the session's head, never
inside a turn.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from local2 import events
from local2.contracts import (
    LOCAL_NAME,
    EventEntry,
    FeedbackResult,
    Pairwise,
    Respondent,
    Reward,
    TurnRecord,
)
from local2.errors import InvalidInput, UnknownTurn
from local2.graph import (
    RESPONDENT_IDS,
    Services,
    TurnGraph,
    TurnState,
    TurnUpdate,
    event,
    record_vote,
    respondent_view,
    turn_payload,
    turn_record,
    votes_of,
)
from local2.ids import check_session_id
from local2.memory import deferred
from local2.service.chat._running import Turns
from local2.service.chat._sessions import SessionReader

PREFERENCES = ("a", "b", "tie")


@dataclass(eq=False)
class Ratings:
    """Ratings, preferences and second attempts, on the session's head."""

    services: Services
    graph: TurnGraph
    running: Turns
    reader: SessionReader

    def __post_init__(self) -> None:
        self.settings = self.services.settings

    # -- ratings ---------------------------------------------------------------------------

    def feedback(
        self, session_id: str, query_id: str, rating: int, comment: str | None = None
    ) -> FeedbackResult:
        """Record a person's 1-5 rating of a turn: ``user.feedback`` then ``reward.event``.

        One rating per answer: the same rating again records nothing (``unchanged``); another
        one replaces it (``previous`` says what it was). ``engrams_annotated`` counts the
        turn's engrams given the rating; None when memory is not open in this process: the
        rating then waits and is applied when it next opens.
        """
        if not isinstance(rating, int) or not 1 <= rating <= 5:
            raise InvalidInput(f"A rating is a whole number from 1 to 5, got {rating!r}.")
        session_id = check_session_id(session_id)  # before its lock is taken
        with self.running.hold(session_id):
            head = self.reader.head(session_id)
            if head is None:
                raise UnknownTurn(f"No session '{session_id}'")
            turn = self.services.turn_log.find(session_id, query_id)
            if turn is None:
                raise UnknownTurn(f"No turn '{query_id}' in session '{session_id}'")
            values = cast(TurnState, head.values)  # the session's state at its head
            before = self._rating_of(values, turn.id, query_id)
            result: FeedbackResult = {
                "session_id": session_id,
                "query_id": query_id,
                "rating": rating,
            }
            if (
                before is not None
                and before.get("rating") == rating
                and (comment is None or before.get("comment") == comment)
            ):
                return {**result, "unchanged": True, "engrams_annotated": 0, "events": []}
            previous = before.get("rating") if before else None
            given, reward = self._record_rating(
                head.config, turn.id, query_id, rating, comment, previous
            )
            owner = owner_of(values)
        # Memory not open here (`local2 feedback`), or down: the annotation waits for the
        # next process that opens the owner's memory, and ``engrams_annotated`` is None.
        annotated = deferred.annotate(
            self.services.memory_for(owner),
            self.settings,
            query_id,
            owner=owner,
            reward=float(rating),
        )
        return {
            **result,
            "previous": previous,
            "engrams_annotated": annotated,
            "events": [given, reward],
        }

    def _rating_of(self, values: TurnState, turn_id: str, query_id: str) -> Reward | None:
        """The rating a turn has now: its note, else the one in the session's state."""
        noted = self.services.turn_log.notes([turn_id]).get(turn_id, {}).get("rating")
        return noted or (values.get("rewards") or {}).get(query_id)

    def _record_rating(
        self,
        head_config: RunnableConfig,
        turn_id: str,
        query_id: str,
        rating: int,
        comment: str | None,
        previous: int | None,
    ) -> tuple[EventEntry, EventEntry]:
        """Write the rating once: the two events and the reward on the head, a note on the turn."""
        now = time.time()
        base = {"started_at": now}
        session_id = head_config["configurable"]["thread_id"]
        given = event(
            base,
            events.USER_FEEDBACK,
            session_id=session_id,
            query_id=query_id,
            rating=rating,
            comment=comment,
            replaces=previous,
        )
        reward = event(
            base, events.REWARD_EVENT, session_id=session_id, query_id=query_id, reward=rating
        )
        entry: Reward = {"rating": rating, "comment": comment, "at": now}
        self.graph.update_state(
            head_config,
            {"rewards": {query_id: entry}, "event_log": [given, reward]},
            as_node="ingest",
        )
        self.services.turn_log.note(turn_id, "rating", entry)
        return given, reward

    # -- two respondents -------------------------------------------------------------------

    def prefer(
        self, session_id: str, query_id: str, preferred: str, comment: str | None = None
    ) -> FeedbackResult:
        """The person's verdict on a compare turn: ``a``, ``b`` or ``tie``.

        The preferred answer continues the session's history (a tie keeps the one shown); the
        vote counts in the arena and marks both engrams' ``pairwise_winner``.
        """
        if preferred not in PREFERENCES:
            raise InvalidInput(f"A preference is one of a, b or tie, got {preferred!r}.")
        session_id = check_session_id(session_id)  # before its lock is taken
        services = self.services
        with self.running.hold(session_id):
            head = self.reader.head_or_unknown(session_id)
            values = cast(TurnState, head.values)  # the session's state at its head
            pairwise: Pairwise = {**(values.get("pairwise") or {})}
            if query_id != pairwise.get("query_id") or query_id != values.get("query_id"):
                return self._prefer_earlier(
                    session_id, query_id, preferred, comment, owner_of(values)
                )
            records = values.get("respondents") or {}
            shown = pairwise.get("shown") or "a"
            target = shown if preferred == "tie" else preferred
            if not (records.get(target) or {}).get("answer"):
                raise UnknownTurn(f"Respondent {target} gave no answer in turn '{query_id}'.")
            now = {"started_at": time.time()}
            log = [_preference_event(now, session_id, query_id, preferred, comment)]
            update: TurnUpdate = {}
            if target != shown:
                update = self._switch_to(session_id, query_id, values, target, now, log)
            pairwise["preferred"], pairwise["shown"] = preferred, target
            self.graph.update_state(
                head.config,
                {**update, "pairwise": pairwise, "event_log": log},
                as_node="settle_pair",
            )
            record_vote(services, {**values, "pairwise": pairwise}, "person", preferred)
        marked = _mark_engrams(
            services, records, owner_of(values), pairwise_winner=preferred, pairwise_by="person"
        )
        return {
            "session_id": session_id,
            "query_id": query_id,
            "preferred": preferred,  # type: ignore[typeddict-item]  # checked against the literals above
            "continues": target,  # type: ignore[typeddict-item]  # a respondent id, "a" or "b"
            "continues_history": True,
            "engrams_annotated": marked,
            "events": log,
        }

    def _switch_to(
        self,
        session_id: str,
        query_id: str,
        values: TurnState,
        target: str,
        now: dict[str, float],
        log: list[EventEntry],
    ) -> TurnUpdate:
        """The state update that makes respondent ``target``'s answer the one the history
        continues from (appended to the turn log beside the other the first time)."""
        records = values.get("respondents") or {}
        pairwise = values.get("pairwise") or {}
        turn_id = records[target].get("turn_id")
        if not turn_id:  # first time this answer continues: append it beside the other
            view = respondent_view(values, target)
            turn_id = self.services.turn_log.append(
                parent_id=pairwise.get("parent_head"),
                session_id=session_id,
                query_id=query_id,
                user=values.get("query") or "",
                assistant=records[target]["answer"],
                record={**_turn_record(view), "respondent_id": target},
            )
            critique = records[target].get("critique")
            if critique:  # so a resumed session shows its grade
                self.services.turn_log.note(turn_id, "critique", dict(critique))
        chosen = records[target]
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
        return {
            "history_head": turn_id,
            "answer": chosen["answer"],  # there is one: prefer checked it
            "model": chosen.get("model") or "",
            "backend": chosen.get("backend") or "",
            "critique": chosen.get("critique"),
            "respondents": {target: {"turn_id": turn_id}},
        }

    def _prefer_earlier(
        self, session_id: str, query_id: str, preferred: str, comment: str | None, owner: str
    ) -> FeedbackResult:
        """A preference on a compare turn that is no longer the last: recorded, history kept
        (and ``owner``'s engrams of the turn marked)."""
        services = self.services
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
            model_a=labels.get("a") or "",
            model_b=labels.get("b") or "",
            winner=preferred,
        )
        marked = deferred.mark(
            services.memory_for(owner),
            services.settings,
            query_id=query_id,
            owner=owner,
            pairwise_winner=preferred,
            pairwise_by="person",
        )
        clock = {"started_at": time.time()}
        given = _preference_event(clock, session_id, query_id, preferred, comment)
        return {
            "session_id": session_id,
            "query_id": query_id,
            "preferred": preferred,  # type: ignore[typeddict-item]  # checked against the literals above
            "continues": None,
            "continues_history": False,
            "note": "Recorded; later turns already continue from the answer shown then.",
            "engrams_annotated": marked,
            "events": [given],
        }


def _turn_record(view: Mapping[str, Any]) -> TurnRecord:
    return turn_record(turn_payload(view))


def owner_of(values: TurnState) -> str:
    """Whose session this is, as its state says (none: from before owners, local's): whose
    engrams a rating or preference annotates."""
    return str(values.get("owner") or LOCAL_NAME)


def _mark_engrams(
    services: Services, records: dict[str, Respondent], owner: str, **fields: Any
) -> int | None:
    """Mark both respondents' engrams in ``owner``'s memory; None when it is not open here
    and the marks wait for it (:mod:`local2.memory.deferred`)."""
    store = services.memory_for(owner)
    counts = [
        deferred.mark(store, services.settings, engram, owner=owner, **fields)
        for engram in ((records.get(rid) or {}).get("engram_id") for rid in RESPONDENT_IDS)
        if engram
    ]
    return None if None in counts else sum(c or 0 for c in counts)


def _preference_event(
    clock: dict[str, float], session_id: str, query_id: str, preferred: str, comment: str | None
) -> EventEntry:
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
