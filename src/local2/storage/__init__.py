"""Where everything is kept (a part: docs/architecture.md): checkpoints, the turn log, the
arena's votes, research runs, session locks and the audit log, on SQLite by default or
Postgres for a team. :mod:`.open` is the one place that chooses.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "SteerInbox": "local2.storage.research_steers",
    "token_hash": "local2.storage.people",
    "private_dir": "local2.storage.private_files",
    "write_private": "local2.storage.private_files",
    "write_private_bytes": "local2.storage.private_files",
    "claim_private": "local2.storage.private_files",
    "People": "local2.storage.people",
    "ResearchStorage": "local2.storage.bundles",
    "SharedLocks": "local2.storage.locks",
    "Storage": "local2.storage.bundles",
    "StoreTurnLog": "local2.storage.store_turn_log",
    "StoreVoteLog": "local2.storage.votes",
    "Turn": "local2.storage.turn_log",
    "TurnLog": "local2.storage.turn_log",
    "Vote": "local2.storage.votes",
    "VoteLog": "local2.storage.votes",
    "Voter": "local2.storage.votes",
    "add_late_grade": "local2.storage.audit_log",
    "audit_turn": "local2.storage.audit_log",
    "check_name": "local2.storage.people",
    "describe": "local2.storage.postgres",
    "list_runs": "local2.storage.audit_log",
    "open_people": "local2.storage.open",
    "open_research_storage": "local2.storage.open",
    "open_storage": "local2.storage.open",
    "open_votes": "local2.storage.open",
    "platform_store": "local2.storage.store_turn_log",
    "raise_if_full": "local2.storage.full",
    "show_run": "local2.storage.audit_log",
    "votes_path": "local2.storage.open",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "People",
    "ResearchStorage",
    "SharedLocks",
    "SteerInbox",
    "Storage",
    "StoreTurnLog",
    "StoreVoteLog",
    "Turn",
    "TurnLog",
    "Vote",
    "VoteLog",
    "Voter",
    "add_late_grade",
    "audit_turn",
    "check_name",
    "claim_private",
    "describe",
    "list_runs",
    "open_people",
    "open_research_storage",
    "open_storage",
    "open_votes",
    "platform_store",
    "private_dir",
    "raise_if_full",
    "show_run",
    "token_hash",
    "votes_path",
    "write_private",
    "write_private_bytes",
]
