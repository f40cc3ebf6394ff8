"""Reciprocal-rank fusion: several rankings of the same items made one, by rank alone.

``score(item) = sum(1 / (k + rank))`` over the rankings that have it (rank from 1), so a
BM25 score and a cosine similarity, which share no scale, need none. ``k = 60`` is the
value of Cormack et al. (2009), which measured good on the folder benchmark too
(``bench/folder_search.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Fused(Generic[T]):
    """An item of the fused ranking: its fused score and its rank in each ranking (1-based;
    None: not in that one)."""

    item: T
    score: float
    ranks: tuple[int | None, ...]


def fuse(rankings: Sequence[Sequence[T]], k: int = 60) -> list[Fused[T]]:
    """The items of ``rankings`` (each best first) by fused score, best first; among equals
    the one ranked earlier in the first ranking that has it first."""
    scores: dict[T, float] = {}
    ranks: dict[T, list[int | None]] = {}
    for which, ranking in enumerate(rankings):
        for rank, item in enumerate(ranking, start=1):
            if item in ranks and ranks[item][which] is not None:
                continue  # an item twice in one ranking counts at its best rank
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(item, [None] * len(rankings))[which] = rank
    order = list(scores)  # first seen first: the tie-break
    order.sort(key=lambda item: -scores[item])
    return [Fused(item, scores[item], tuple(ranks[item])) for item in order]
