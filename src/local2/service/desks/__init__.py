"""The desks: what a person keeps here, as every surface handles it outside a turn: their
documents and the folders' index, the library of what was read, their memory, a search of
their own text, what the MCP server reads on their behalf, and the audit log and votes
they may read."""

from local2.service.desks._audit import VoteDesk as VoteDesk
from local2.service.desks._audit import audit_call as audit_call
from local2.service.desks._audit import own_run as own_run
from local2.service.desks._audit import own_runs as own_runs
from local2.service.desks._audit import own_votes as own_votes
from local2.service.desks._audit import visible_votes as visible_votes
from local2.service.desks._documents import DocumentDesk as DocumentDesk
from local2.service.desks._documents import open_desk as open_desk
from local2.service.desks._library import LibraryDesk as LibraryDesk
from local2.service.desks._library import open_library as open_library
from local2.service.desks._memory import MemoryDesk as MemoryDesk
from local2.service.desks._own_text import DocumentPages as DocumentPages
from local2.service.desks._own_text import OwnText as OwnText
from local2.service.desks._own_text import own_text_of as own_text_of
from local2.service.desks._search import Searcher as Searcher
from local2.service.desks._search import open_searcher as open_searcher
from local2.service.desks._search import services_recall as services_recall

__all__ = [
    "DocumentDesk",
    "DocumentPages",
    "LibraryDesk",
    "MemoryDesk",
    "OwnText",
    "Searcher",
    "VoteDesk",
    "audit_call",
    "open_desk",
    "open_library",
    "open_searcher",
    "own_run",
    "own_runs",
    "own_text_of",
    "own_votes",
    "services_recall",
    "visible_votes",
]
