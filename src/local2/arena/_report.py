"""The arena table: ratings per model, people's votes and the judge's apart, and exports."""

from __future__ import annotations

import csv
import io
import json

from local2.arena._ratings import Rating, rate
from local2.storage import Vote

GROUPS = {"people": "person", "judge": "judge"}  # table group -> voter
CSV_COLUMNS = ("voters", "model", "rating", "ci_low", "ci_high", "votes", "wins", "losses", "ties")


def arena(votes: list[Vote]) -> dict[str, list[Rating]]:
    """``{"people": [...], "judge": [...]}``, each best first."""
    return {
        group: rate((v.model_a, v.model_b, v.winner) for v in votes if v.voter == voter)
        for group, voter in GROUPS.items()
    }


def as_json(table: dict[str, list[Rating]], votes: list[Vote]) -> str:
    document: dict[str, object] = {g: [r.as_dict() for r in rows] for g, rows in table.items()}
    document["votes"] = {
        group: sum(v.voter == voter for v in votes) for group, voter in GROUPS.items()
    }
    document["method"] = (
        "Bradley-Terry (ties half a win, one prior game per model), Elo-like scale with "
        "mean 1000, 95% Wald interval"
    )
    return json.dumps(document, indent=2)


def as_csv(table: dict[str, list[Rating]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for group, rows in table.items():
        for r in rows:
            writer.writerow(
                (group, r.model, r.rating, r.ci_low, r.ci_high, r.votes, r.wins, r.losses, r.ties)
            )
    return buffer.getvalue()
