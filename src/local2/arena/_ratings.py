"""Bradley-Terry ratings from arena votes, with 95% confidence intervals.

The model: P(i beats j) = p_i / (p_i + p_j). Strengths are fitted by Hunter's MM algorithm
(each step raises the likelihood), a tie counting as half a win for each side, which is
how the public chatbot arenas count them. With few votes a model that won every game would
get an infinite strength, so every model also plays ``prior`` virtual games against a fixed
reference player of strength 1, half won and half lost: a weak pull towards "average" that
fades as real votes accumulate. Ratings are shown on the familiar Elo-like scale,
``400 * log10(p)``, shifted so the models' mean is 1000: 400 points mean 10:1 odds.

A rating says how a model stands against the others, so its 95% interval is that of its
distance from the mean: the Wald interval, +-1.96 standard errors from the inverse of the
observed information (the curvature of the log-likelihood, prior games included). Unlike
a bootstrap it stays honest with a handful of votes: one vote gives an interval hundreds
of points wide, not a zero-width one (every resample of one vote is that vote).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

BASE_RATING = 1000.0
SCALE = 400.0
PRIOR_GAMES = 1.0
Z95 = 1.959964
MAX_ITERATIONS = 1000
TOLERANCE = 1e-9

Game = tuple[str, str, str]  # model_a, model_b, winner ("a" | "b" | "tie")


@dataclass(frozen=True)
class Rating:
    """A model's rating as the arena's JSON and tables show it."""

    model: str
    rating: float
    ci_low: float
    ci_high: float
    votes: int
    wins: int
    losses: int
    ties: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _scores(games: Sequence[Game]) -> tuple[dict[str, float], dict[tuple[str, str], int]]:
    """Each model's points (win 1, tie 0.5) and the number of games per pair."""
    points: dict[str, float] = defaultdict(float)
    played: dict[tuple[str, str], int] = defaultdict(int)
    for a, b, winner in games:
        points[a] += {"a": 1.0, "b": 0.0, "tie": 0.5}[winner]
        points[b] += {"a": 0.0, "b": 1.0, "tie": 0.5}[winner]
        played[(a, b)] += 1
        played[(b, a)] += 1
    return points, played


def strengths(games: Sequence[Game], prior: float = PRIOR_GAMES) -> dict[str, float]:
    """Bradley-Terry strengths by MM iterations; the reference player has strength 1."""
    games = [g for g in games if g[0] != g[1]]
    models = sorted({m for a, b, _ in games for m in (a, b)})
    if not models:
        return {}
    points, played = _scores(games)
    opponents: dict[str, list[str]] = {m: [] for m in models}
    for a, b in played:
        opponents[a].append(b)
    p = dict.fromkeys(models, 1.0)
    for _ in range(MAX_ITERATIONS):
        new = {}
        for i in models:
            won = points[i] + prior / 2
            denominator = prior / (p[i] + 1.0)
            denominator += sum(played[(i, j)] / (p[i] + p[j]) for j in opponents[i])
            new[i] = won / denominator
        change = max(abs(math.log(new[m] / p[m])) for m in models)
        p = new
        if change < TOLERANCE:
            break
    return p


def to_rating(strength: float) -> float:
    return SCALE * math.log10(strength)


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse of a small positive-definite matrix."""
    n = len(matrix)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(work[r][col]))
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [v / scale for v in work[col]]
        for r in range(n):
            if r != col and work[r][col]:
                factor = work[r][col]
                work[r] = [v - factor * w for v, w in zip(work[r], work[col], strict=True)]
    return [row[n:] for row in work]


def standard_errors(
    games: Sequence[Game], fitted: dict[str, float], prior: float = PRIOR_GAMES
) -> dict[str, float]:
    """Standard error of each model's log-strength minus the mean log-strength."""
    models = list(fitted)
    index = {m: i for i, m in enumerate(models)}
    _, played = _scores(games)
    info = [[0.0] * len(models) for _ in models]
    for i, model in enumerate(models):
        against_reference = fitted[model] / (fitted[model] + 1.0)
        info[i][i] += prior * against_reference * (1 - against_reference)
    for (a, b), n in played.items():
        p = fitted[a] / (fitted[a] + fitted[b])
        weight = n * p * (1 - p)
        info[index[a]][index[a]] += weight
        info[index[a]][index[b]] -= weight
    cov = _inverse(info)
    n = len(models)
    total = sum(map(sum, cov)) / (n * n)
    return {
        m: math.sqrt(max(cov[i][i] - 2 * sum(cov[i]) / n + total, 0.0)) for m, i in index.items()
    }


def rate(games: Iterable[Game], prior: float = PRIOR_GAMES) -> list[Rating]:
    """Each model's rating, 95% interval and record, best first."""
    games = [g for g in games if g[0] != g[1]]
    fitted = strengths(games, prior)
    if not fitted:
        return []
    errors = standard_errors(games, fitted, prior)
    record: dict[str, Counter[str]] = {m: Counter() for m in fitted}
    outcome = {"a": ("wins", "losses"), "b": ("losses", "wins"), "tie": ("ties", "ties")}
    for a, b, winner in games:
        record[a][outcome[winner][0]] += 1
        record[b][outcome[winner][1]] += 1
    per_log = SCALE / math.log(10)  # rating points per unit of natural log-strength
    mean = sum(to_rating(p) for p in fitted.values()) / len(fitted)
    rows = []
    for model, strength in fitted.items():
        counts = record[model]
        rating = to_rating(strength) - mean + BASE_RATING
        half = Z95 * errors[model] * per_log
        rows.append(
            Rating(
                model=model,
                rating=round(rating, 1),
                ci_low=round(rating - half, 1),
                ci_high=round(rating + half, 1),
                votes=counts["wins"] + counts["losses"] + counts["ties"],
                wins=counts["wins"],
                losses=counts["losses"],
                ties=counts["ties"],
            )
        )
    rows.sort(key=lambda r: (-r.rating, r.model))
    return rows
