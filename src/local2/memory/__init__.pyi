from . import deferred as deferred
from ._embedders import Embedder as Embedder
from ._embedders import make_embedder as make_embedder
from ._facts import Distilled as Distilled
from ._facts import Fact as Fact
from ._facts import FactRecord as FactRecord
from ._facts import distill as distill
from ._facts import explicit_requests as explicit_requests
from ._facts import fact_key as fact_key
from ._facts import message_sentences as message_sentences
from ._facts import only_requests as only_requests
from ._facts import third_person as third_person
from ._facts import without_tool_text as without_tool_text
from ._owners import JsonlQueue as JsonlQueue
from ._owners import chroma_client as chroma_client
from ._owners import is_local as is_local
from ._owners import owner_file as owner_file
from ._owners import owner_folder as owner_folder
from ._shelf import TEAM_KIND as TEAM_KIND
from ._shelf import TEAM_SOURCE as TEAM_SOURCE
from ._shelf import MemoryShelf as MemoryShelf
from ._shelf import TeamFacts as TeamFacts
from ._shelf import as_team as as_team
from ._shelf import offered as offered
from ._shelf import open_memory_noting as open_memory_noting
from ._shelf import recall_with_team as recall_with_team
from ._store import EngramStore as EngramStore
from ._store import FactSaved as FactSaved

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
