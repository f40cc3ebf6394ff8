"""Recall ranking: how a memory's similarity, age and rating combine into one score.

    score = w_sim * similarity + w_recency * recency + w_reward * reward_term

- ``similarity`` = 1 - cosine distance (the collection uses the cosine space), in [-1, 1].
- ``recency`` = 0.5 ** (age_days / half_life_days): 1 when new, 0.5 after one half-life.
- ``reward_term`` in [-1, 1]: the person's rating (1-5) mapped by (r - 3) / 2 when there is
  one; else the critic's grade (1-5) mapped the same way at half weight (a judge is less
  sure than the person); else 0 (neutral, neither helped nor hurt).

Weights, half-life and the similarity floor come from ``MemorySettings``. Engrams rated bad
(reward <= 2) or graded low (critic_score <= 2) are left out of recall unless asked for, and
hits below ``min_similarity`` are dropped before ranking (as are facts a newer fact
superseded), so a good rating can lift a
relevant memory but never make an irrelevant one appear. Chroma returns more candidates
than ``k`` (see :func:`candidate_count`) so re-ranking can reorder beyond its top ``k``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from local2.config import MemorySettings

BAD_THRESHOLD = 2  # ratings and grades at or below this mark an engram as bad
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Weights:
    similarity: float
    recency: float
    reward: float
    half_life_days: float
    min_similarity: float

    @classmethod
    def from_settings(cls, memory: MemorySettings) -> Weights:
        return cls(
            similarity=memory.weight_similarity,
            recency=memory.weight_recency,
            reward=memory.weight_reward,
            half_life_days=memory.recency_half_life_days,
            min_similarity=memory.min_similarity,
        )


def candidate_count(k: int, total: int) -> int:
    """How many nearest neighbours to fetch before re-ranking: 4k, at least 20, at most all."""
    return max(0, min(total, max(4 * k, 20)))


def recency(age_s: float, half_life_days: float) -> float:
    return float(0.5 ** (max(age_s, 0.0) / (half_life_days * SECONDS_PER_DAY)))


def reward_term(reward: float | None, critic_score: float | None) -> float:
    if reward is not None:
        return (float(reward) - 3.0) / 2.0
    if critic_score is not None:
        return 0.5 * (float(critic_score) - 3.0) / 2.0
    return 0.0


def is_bad(meta: Mapping[str, Any]) -> bool:
    """Rated bad by the person or graded low by the critic."""
    reward, critic = meta.get("reward"), meta.get("critic_score")
    return (reward is not None and reward <= BAD_THRESHOLD) or (
        critic is not None and critic <= BAD_THRESHOLD
    )


def score(similarity: float, age_s: float, meta: Mapping[str, Any], w: Weights) -> float:
    return (
        w.similarity * similarity
        + w.recency * recency(age_s, w.half_life_days)
        + w.reward * reward_term(meta.get("reward"), meta.get("critic_score"))
    )


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    meta: Mapping[str, Any]
    similarity: float
    age_s: float
    score: float


def rank(
    rows: list[tuple[str, str, Mapping[str, Any], float]],
    k: int,
    w: Weights,
    now: float,
    *,
    include_bad: bool = False,
    kinds: Collection[str] | None = None,
) -> list[Candidate]:
    """Re-rank ``(id, content, metadata, cosine distance)`` rows and keep the best ``k``.

    Superseded facts never count; ``kinds`` (when given) keeps only engrams of those kinds.
    """
    kept: list[Candidate] = []
    for engram_id, content, meta, distance in rows:
        similarity = 1.0 - float(distance)
        if similarity < w.min_similarity or (not include_bad and is_bad(meta)):
            continue
        if meta.get("superseded_by") or (kinds is not None and meta.get("kind") not in kinds):
            continue
        age_s = max(0.0, now - float(meta.get("created_at", now)))
        kept.append(
            Candidate(
                engram_id, content, meta, similarity, age_s, score(similarity, age_s, meta, w)
            )
        )
    kept.sort(key=lambda c: c.score, reverse=True)
    return kept[:k]
