"""The arena's votes a compare turn leaves: the judge's when it compares, the person's when
they prefer an answer (:mod:`local2.service.chat._ratings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local2.graph.services import Services
from local2.storage import VoteLog


def votes_of(services: Services) -> VoteLog:
    """The arena's vote log, opened on first use."""
    if services.votes is None:
        from local2.storage import open_votes

        services.votes = open_votes(services.settings)
    return services.votes


def record_vote(services: Services, state: Mapping[str, Any], voter: str, winner: str) -> None:
    """Count ``winner`` (a, b or tie) as ``voter``'s verdict on the turn's two models."""
    pairwise = state.get("pairwise") or {}
    labels = {rid: s.get("label") or "" for rid, s in (pairwise.get("specs") or {}).items()}
    votes_of(services).record(
        session_id=state.get("session_id") or "",
        query_id=pairwise.get("query_id") or state.get("query_id") or "",
        voter=voter,  # type: ignore[arg-type]  # a label the vote log checks
        model_a=labels.get("a", ""),
        model_b=labels.get("b", ""),
        winner=winner,
    )
