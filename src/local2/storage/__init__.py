"""Where everything is kept (a part: docs/architecture.md): checkpoints, the turn log, the
arena's votes, research runs, session locks and the audit log, on SQLite by default or
Postgres for a team. :mod:`.open` is the one place that chooses.
"""
