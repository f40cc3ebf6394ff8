"""Where everything is kept (a part: docs/architecture.md): checkpoints, the turn log, the
arena's votes, research runs, session locks, the audit log and watches, on SQLite by default or
Postgres for a team. :mod:`._open` is the one place that chooses.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
