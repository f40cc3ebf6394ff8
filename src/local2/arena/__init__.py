"""The arena: which model answers this person's questions best (docs/architecture.md, "A turn's
path").

Every compare turn leaves votes - the judge's at once, the person's when they prefer an
answer - in :mod:`.votes`; :mod:`.ratings` turns them into a Bradley-Terry rating per model
with a bootstrap confidence interval, people's and the judge's apart.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Rating": "local2.arena.ratings",  # a row of the table arena() returns
    "arena": "local2.arena.report",
    "as_csv": "local2.arena.report",
    "as_json": "local2.arena.report",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "Rating",
    "arena",
    "as_csv",
    "as_json",
]
