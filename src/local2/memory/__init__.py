"""Long-term memory: the engram store on Chroma (``store``) and its embedders (``embeddings``).

Import from the submodules; this package stays light so the CLI starts quickly.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.memory import deferred as deferred
    from local2.memory.chroma import chroma_client as chroma_client
    from local2.memory.embeddings import Embedder as Embedder
    from local2.memory.embeddings import make_embedder as make_embedder
    from local2.memory.extract import Distilled as Distilled
    from local2.memory.extract import distill as distill
    from local2.memory.facts import Fact as Fact
    from local2.memory.facts import FactRecord as FactRecord
    from local2.memory.facts import explicit_requests as explicit_requests
    from local2.memory.facts import fact_key as fact_key
    from local2.memory.facts import message_sentences as message_sentences
    from local2.memory.facts import only_requests as only_requests
    from local2.memory.facts import third_person as third_person
    from local2.memory.jsonl_queue import JsonlQueue as JsonlQueue
    from local2.memory.open import open_memory_noting as open_memory_noting
    from local2.memory.owners import is_local as is_local
    from local2.memory.owners import owner_file as owner_file
    from local2.memory.owners import owner_folder as owner_folder
    from local2.memory.relevance import offered as offered
    from local2.memory.shelf import MemoryShelf as MemoryShelf
    from local2.memory.store import EngramStore as EngramStore
    from local2.memory.store import FactSaved as FactSaved
    from local2.memory.team import TEAM_KIND as TEAM_KIND
    from local2.memory.team import TEAM_SOURCE as TEAM_SOURCE
    from local2.memory.team import TeamFacts as TeamFacts
    from local2.memory.team import as_team as as_team
    from local2.memory.team import recall_with_team as recall_with_team
    from local2.memory.verbatim import without_tool_text as without_tool_text
else:
    __getattr__ = lazy_face(__name__, __file__)
