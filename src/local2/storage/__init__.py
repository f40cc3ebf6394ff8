"""Where everything is kept (a part: docs/architecture.md): checkpoints, the turn log, the
arena's votes, research runs, session locks, the audit log and watches, on SQLite by default or
Postgres for a team. :mod:`.open` is the one place that chooses.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.storage.audit_log import add_late_grade as add_late_grade
    from local2.storage.audit_log import audit_turn as audit_turn
    from local2.storage.audit_log import list_runs as list_runs
    from local2.storage.audit_log import show_run as show_run
    from local2.storage.bundles import ResearchStorage as ResearchStorage
    from local2.storage.bundles import Storage as Storage
    from local2.storage.call_log import list_calls as list_calls
    from local2.storage.call_log import write_call as write_call
    from local2.storage.full import raise_if_full as raise_if_full
    from local2.storage.locks import SharedLocks as SharedLocks
    from local2.storage.open import open_people as open_people
    from local2.storage.open import open_research_storage as open_research_storage
    from local2.storage.open import open_storage as open_storage
    from local2.storage.open import open_votes as open_votes
    from local2.storage.open import votes_path as votes_path
    from local2.storage.people import AdminRead as AdminRead
    from local2.storage.people import People as People
    from local2.storage.people import PersonRow as PersonRow
    from local2.storage.people import check_name as check_name
    from local2.storage.people import token_hash as token_hash
    from local2.storage.postgres import describe as describe
    from local2.storage.private_files import claim_private as claim_private
    from local2.storage.private_files import keep_newest as keep_newest
    from local2.storage.private_files import private_dir as private_dir
    from local2.storage.private_files import write_private as write_private
    from local2.storage.private_files import write_private_bytes as write_private_bytes
    from local2.storage.research_runs import RunRow as RunRow
    from local2.storage.research_steers import SteerInbox as SteerInbox
    from local2.storage.sqlite import SqliteSql as SqliteSql
    from local2.storage.store_turn_log import StoreTurnLog as StoreTurnLog
    from local2.storage.store_turn_log import platform_store as platform_store
    from local2.storage.turn_log import Turn as Turn
    from local2.storage.turn_log import TurnLog as TurnLog
    from local2.storage.votes import StoreVoteLog as StoreVoteLog
    from local2.storage.votes import Vote as Vote
    from local2.storage.votes import VoteLog as VoteLog
    from local2.storage.votes import Voter as Voter
    from local2.storage.watch_notes import DeliveryRow as DeliveryRow
    from local2.storage.watch_notes import NoticeRow as NoticeRow
    from local2.storage.watch_open import open_watches as open_watches
    from local2.storage.watches import SqliteWatchStore as SqliteWatchStore
    from local2.storage.watches import WatchRow as WatchRow
    from local2.storage.watches import WatchRunRow as WatchRunRow
    from local2.storage.watches import WatchStore as WatchStore
    from local2.storage.watches import run_id_for as run_id_for
else:
    __getattr__ = lazy_face(__name__, __file__)
