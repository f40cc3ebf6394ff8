"""The arena: which model answers this person's questions best (docs/architecture.md, "A turn's
path").

Every compare turn leaves votes - the judge's at once, the person's when they prefer an
answer - in :mod:`.votes`; :mod:`._ratings` turns them into a Bradley-Terry rating per model
with a bootstrap confidence interval, people's and the judge's apart.
"""

from local2.arena._ratings import Rating
from local2.arena._report import arena, as_csv, as_json

__all__ = [
    "Rating",
    "arena",
    "as_csv",
    "as_json",
]
