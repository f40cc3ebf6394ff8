"""A grade given after the session's next question, from the turn's own checkpoint.

A critique that gave way to the person's next question left its grade owed
(:mod:`local2.graph.owed`). Later, once the session is quiet,
:mod:`local2.service.chat._late_grades` grades the turn from that checkpoint (:func:`judge_late`:
the same judge, the same evidence) and gives the grade (:func:`keep_late`, then
:func:`landing`): the same records an in-run grade keeps (the turn log's note, the engram's
score; for a pair both grades, the verdict, the engrams' marks and the judge's arena vote)
and, on the session's head, one new checkpoint that clears the owed entry and logs
``critique.result`` with ``late: true``. When the head is still that turn, the grade also goes
where an in-run grade goes (``critique``, the respondents' grades, the verdict, a retry's
settling). The turn's own checkpoints are never rewritten, so the history is not forked, and
time travel shows each checkpoint as it was when it was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from local2 import events
from local2.contracts import Critique, PendingGrade, Verdict
from local2.graph.compare.pair import judge_respondents, mark_and_vote, pair_graded
from local2.graph.grading import judge_turn, record_grade
from local2.graph.nodes.retry import settle
from local2.graph.services import Services
from local2.graph.state import TurnUpdate
from local2.models import Cancellation


@dataclass(frozen=True)
class LateGrade:
    """What the judge said about one owed turn: the shown answer's critique, and for a pair
    both critiques and the verdict."""

    critique: Critique
    critiques: dict[str, Critique] = field(default_factory=dict)
    verdict: Verdict | None = None


def judge_late(
    values: Mapping[str, Any],
    services: Services,
    owed: PendingGrade,
    cancel: Cancellation | None = None,
) -> LateGrade:
    """Grade the turn of ``values`` (its checkpoint's state) as its critique would have;
    :class:`~local2.errors.GaveWay` when ``cancel`` is set first."""
    if not owed.get("pair"):
        return LateGrade(judge_turn(values, services, cancel))
    critiques, verdict = judge_respondents(values, services, cancel)
    shown = (values.get("pairwise") or {}).get("shown") or "a"
    return LateGrade(critiques[shown], critiques, verdict)


def keep_late(
    values: Mapping[str, Any], services: Services, owed: PendingGrade, grade: LateGrade
) -> TurnUpdate:
    """Keep the grade where an in-run one is kept (the turn log's note, the engram's score;
    a pair's marks and the judge's vote too); returns the grade's update for the state."""
    if not owed.get("pair") or grade.verdict is None:
        return record_grade(values, services, grade.critique, late=True)
    update = pair_graded(values, services, grade.critiques, grade.verdict, late=True)
    respondents = {
        rid: {**record, **(update.get("respondents") or {}).get(rid, {})}  # type: ignore[union-attr]  # a pair's update names both respondents
        for rid, record in (values.get("respondents") or {}).items()
    }
    mark_and_vote(
        {**values, "pairwise": update.get("pairwise"), "respondents": respondents}, services
    )
    return update


def landing(head: Mapping[str, Any], query_id: str, given: TurnUpdate) -> TurnUpdate:
    """The update of the session's head once the grade of ``query_id`` is ``given``: the
    pending entry cleared and the grade's events logged; where an in-run grade goes too when
    the head is still that turn (the answer still offered: a retry after a low grade)."""
    log = [e for e in given.get("event_log") or [] if isinstance(e, dict)]
    update: TurnUpdate = {"pending_grades": {query_id: None}}
    if head.get("query_id") != query_id:  # the session moved on: only the record of it
        update["event_log"] = [e for e in log if e.get("subject") != events.RETRY_OFFERED]
        return update
    update.update(given)
    update["pending_grades"] = {query_id: None}
    retry = head.get("retry") or {}
    if retry.get("query_id") == query_id:  # a second attempt: the better one continues
        settled = settle({**head, "critique": given.get("critique"), "pending_grades": {}})
        log += [e for e in settled.get("event_log") or [] if isinstance(e, dict)]
        update.update({k: v for k, v in settled.items() if k != "event_log"})  # type: ignore[typeddict-item]  # settle's own keys of TurnUpdate
    update["event_log"] = log
    return update
