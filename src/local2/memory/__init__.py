"""Long-term memory: the engram store on Chroma (``store``) and its embedders (``embeddings``).

Import from the submodules; this package stays light so the CLI starts quickly.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "owner_folder": "local2.memory.owners",
    "Distilled": "local2.memory.extract",
    "Embedder": "local2.memory.embeddings",
    "EngramStore": "local2.memory.store",
    "Fact": "local2.memory.facts",
    "FactSaved": "local2.memory.store",
    "JsonlQueue": "local2.memory.jsonl_queue",
    "MemoryShelf": "local2.memory.shelf",
    "TEAM_KIND": "local2.memory.team",
    "TEAM_SOURCE": "local2.memory.team",
    "TeamFacts": "local2.memory.team",
    "as_team": "local2.memory.team",
    "chroma_client": "local2.memory.chroma",
    "deferred": "local2.memory.deferred",
    "distill": "local2.memory.extract",
    "explicit_requests": "local2.memory.facts",
    "fact_key": "local2.memory.facts",
    "is_local": "local2.memory.owners",
    "make_embedder": "local2.memory.embeddings",
    "open_memory_noting": "local2.memory.open",
    "owner_file": "local2.memory.owners",
    "recall_with_team": "local2.memory.team",
    "message_sentences": "local2.memory.facts",
    "third_person": "local2.memory.facts",
    "without_tool_text": "local2.memory.verbatim",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "TEAM_KIND",
    "TEAM_SOURCE",
    "Distilled",
    "Embedder",
    "EngramStore",
    "Fact",
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
    "open_memory_noting",
    "owner_file",
    "owner_folder",
    "recall_with_team",
    "third_person",
    "without_tool_text",
]
