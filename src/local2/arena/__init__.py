"""The arena: which model answers this person's questions best (docs/architecture.md, "A turn's
path").

Every compare turn leaves votes - the judge's at once, the person's when they prefer an
answer - in :mod:`.votes`; :mod:`.ratings` turns them into a Bradley-Terry rating per model
with a bootstrap confidence interval, people's and the judge's apart.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.arena.ratings import Rating as Rating
    from local2.arena.report import arena as arena
    from local2.arena.report import as_csv as as_csv
    from local2.arena.report import as_json as as_json
else:
    __getattr__ = lazy_face(__name__, __file__)
