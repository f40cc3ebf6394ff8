from ._audit_log import add_late_grade as add_late_grade
from ._audit_log import audit_turn as audit_turn
from ._audit_log import list_runs as list_runs
from ._audit_log import show_run as show_run
from ._bundles import ResearchStorage as ResearchStorage
from ._bundles import SharedLocks as SharedLocks
from ._bundles import Storage as Storage
from ._call_log import list_calls as list_calls
from ._call_log import write_call as write_call
from ._full import raise_if_full as raise_if_full
from ._open import open_people as open_people
from ._open import open_research_storage as open_research_storage
from ._open import open_storage as open_storage
from ._open import open_votes as open_votes
from ._open import votes_path as votes_path
from ._people import AdminRead as AdminRead
from ._people import People as People
from ._people import PersonRow as PersonRow
from ._people import check_name as check_name
from ._people import token_hash as token_hash
from ._postgres import describe as describe
from ._private_files import claim_private as claim_private
from ._private_files import keep_newest as keep_newest
from ._private_files import private_dir as private_dir
from ._private_files import write_private as write_private
from ._private_files import write_private_bytes as write_private_bytes
from ._research_runs import RunRow as RunRow
from ._research_runs import SteerInbox as SteerInbox
from ._sqlite import SqliteSql as SqliteSql
from ._store_turn_log import StoreTurnLog as StoreTurnLog
from ._store_turn_log import platform_store as platform_store
from ._turn_log import Turn as Turn
from ._turn_log import TurnLog as TurnLog
from ._votes import StoreVoteLog as StoreVoteLog
from ._votes import Vote as Vote
from ._votes import VoteLog as VoteLog
from ._votes import Voter as Voter
from ._watch_notes import DeliveryRow as DeliveryRow
from ._watch_notes import NoticeRow as NoticeRow
from ._watch_open import open_watches as open_watches
from ._watches import SqliteWatchStore as SqliteWatchStore
from ._watches import WatchRow as WatchRow
from ._watches import WatchRunRow as WatchRunRow
from ._watches import WatchStore as WatchStore
from ._watches import run_id_for as run_id_for

__all__ = [
    "AdminRead",
    "DeliveryRow",
    "NoticeRow",
    "People",
    "PersonRow",
    "ResearchStorage",
    "RunRow",
    "SharedLocks",
    "SqliteSql",
    "SqliteWatchStore",
    "SteerInbox",
    "Storage",
    "StoreTurnLog",
    "StoreVoteLog",
    "Turn",
    "TurnLog",
    "Vote",
    "VoteLog",
    "Voter",
    "WatchRow",
    "WatchRunRow",
    "WatchStore",
    "add_late_grade",
    "audit_turn",
    "check_name",
    "claim_private",
    "describe",
    "keep_newest",
    "list_calls",
    "list_runs",
    "open_people",
    "open_research_storage",
    "open_storage",
    "open_votes",
    "open_watches",
    "platform_store",
    "private_dir",
    "raise_if_full",
    "run_id_for",
    "show_run",
    "token_hash",
    "votes_path",
    "write_call",
    "write_private",
    "write_private_bytes",
]
