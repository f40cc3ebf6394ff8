from . import deferred as deferred
from .chroma import chroma_client as chroma_client
from .embeddings import Embedder as Embedder
from .embeddings import make_embedder as make_embedder
from .extract import Distilled as Distilled
from .extract import distill as distill
from .facts import Fact as Fact
from .facts import FactRecord as FactRecord
from .facts import explicit_requests as explicit_requests
from .facts import fact_key as fact_key
from .facts import message_sentences as message_sentences
from .facts import only_requests as only_requests
from .facts import third_person as third_person
from .jsonl_queue import JsonlQueue as JsonlQueue
from .open import open_memory_noting as open_memory_noting
from .owners import is_local as is_local
from .owners import owner_file as owner_file
from .owners import owner_folder as owner_folder
from .relevance import offered as offered
from .shelf import MemoryShelf as MemoryShelf
from .store import EngramStore as EngramStore
from .store import FactSaved as FactSaved
from .team import TEAM_KIND as TEAM_KIND
from .team import TEAM_SOURCE as TEAM_SOURCE
from .team import TeamFacts as TeamFacts
from .team import as_team as as_team
from .team import recall_with_team as recall_with_team
from .verbatim import without_tool_text as without_tool_text

__all__ = [
    "TEAM_KIND",
    "TEAM_SOURCE",
    "Distilled",
    "Embedder",
    "EngramStore",
    "Fact",
    "FactRecord",
    "FactSaved",
    "JsonlQueue",
    "MemoryShelf",
    "TeamFacts",
    "as_team",
    "chroma_client",
    "deferred",
    "distill",
    "explicit_requests",
    "fact_key",
    "is_local",
    "make_embedder",
    "message_sentences",
    "offered",
    "only_requests",
    "open_memory_noting",
    "owner_file",
    "owner_folder",
    "recall_with_team",
    "third_person",
    "without_tool_text",
]
