from .audit_log import add_late_grade as add_late_grade
from .audit_log import audit_turn as audit_turn
from .audit_log import list_runs as list_runs
from .audit_log import show_run as show_run
from .bundles import ResearchStorage as ResearchStorage
from .bundles import Storage as Storage
from .call_log import list_calls as list_calls
from .call_log import write_call as write_call
from .full import raise_if_full as raise_if_full
from .locks import SharedLocks as SharedLocks
from .open import open_people as open_people
from .open import open_research_storage as open_research_storage
from .open import open_storage as open_storage
from .open import open_votes as open_votes
from .open import votes_path as votes_path
from .people import AdminRead as AdminRead
from .people import People as People
from .people import PersonRow as PersonRow
from .people import check_name as check_name
from .people import token_hash as token_hash
from .postgres import describe as describe
from .private_files import claim_private as claim_private
from .private_files import keep_newest as keep_newest
from .private_files import private_dir as private_dir
from .private_files import write_private as write_private
from .private_files import write_private_bytes as write_private_bytes
from .research_runs import RunRow as RunRow
from .research_steers import SteerInbox as SteerInbox
from .sqlite import SqliteSql as SqliteSql
from .store_turn_log import StoreTurnLog as StoreTurnLog
from .store_turn_log import platform_store as platform_store
from .turn_log import Turn as Turn
from .turn_log import TurnLog as TurnLog
from .votes import StoreVoteLog as StoreVoteLog
from .votes import Vote as Vote
from .votes import VoteLog as VoteLog
from .votes import Voter as Voter
from .watch_notes import DeliveryRow as DeliveryRow
from .watch_notes import NoticeRow as NoticeRow
from .watch_open import open_watches as open_watches
from .watches import SqliteWatchStore as SqliteWatchStore
from .watches import WatchRow as WatchRow
from .watches import WatchRunRow as WatchRunRow
from .watches import WatchStore as WatchStore
from .watches import run_id_for as run_id_for

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
