"""Memory per person and for the team: each person's engram store, opened when first needed;
the team's shared facts, written on purpose and recalled for everyone beside their own;
whether a recalled memory is relevant enough to offer; and opening memory for a run (the
store, or None with the reason the person is told). None of it imports chromadb until memory
is opened.
"""

from __future__ import annotations

import logging
import math
import re
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from local2.config import Settings
from local2.contracts import TEAM_NAME, MemoryHit
from local2.errors import MemoryStoreError
from local2.memory._owners import (
    chroma_client,
    collection_base,
    is_local,
    legacy_collection_base,
    release_client,
)

if TYPE_CHECKING:
    from local2.contracts import MemoryHit
    from local2.memory._store import EngramStore


# --- team -------------------------------------------------------------------------------
# The team's shared facts: written on purpose, recalled for everyone beside their own.
#
# Team facts are engrams of the reserved owner :data:`~local2.contracts._people.TEAM_NAME`, a
# collection family of their own (:mod:`local2.memory._owners`), written only by
# ``local2 memory save --team`` (local or an admin; :func:`~local2.contracts._people.
# may_write_team_facts`). Nothing a turn or the model does writes them: every write path of a
# turn goes to its owner's store (``Services.memory_for``), and the shelf refuses the team's
# name as an owner (:meth:`local2.memory._shelf.MemoryShelf.of`).
#
# Each recall searches the person's own store and, when the team has facts, the team's, by the
# same query vector, and merges the hits by similarity; a team hit says so (``kind: "team"``).
#
# Usually there are none, and a turn must not pay a second Chroma query for nothing. Whether
# there are is looked at no more than once every :data:`TEAM_CHECK_S` seconds
# (:class:`TeamFacts`): first whether the team's collections exist at all (so an install that
# never wrote one never creates them), then their count. The facts are written by the CLI in
# another process, so a new first fact reaches recall within that time. (On embedded Chroma a
# process does not see vectors another process added to a collection it has already loaded:
# facts written after the server first found some are recalled after its restart; a Chroma
# server has no such limit.)

log = logging.getLogger(__name__)

TEAM_CHECK_S = 30.0  # how stale "the team has no facts" may be (they are written elsewhere)
TEAM_KIND = "team"  # a recalled team fact's ``kind`` (the engram itself is a ``saved`` one)
TEAM_SOURCE = "team"  # the stored engram's ``source``


class TeamFacts:
    """The team's store for recall, and whether it holds any facts, looked at no more than
    once every ``check_s`` seconds (thread-safe). Never creates the team's collections:
    ``open_store`` is called only once they exist."""

    def __init__(
        self,
        settings: Any,
        open_store: Callable[[], EngramStore],
        *,
        check_s: float = TEAM_CHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.check_s = check_s
        self._open_store = open_store
        self._clock = clock
        self._client: Any = None
        self._store: EngramStore | None = None
        self._has_facts = False
        self._checked_at = -math.inf
        self._lock = threading.Lock()
        self.looks = 0  # how many times Chroma was asked (tests and benchmarks read it)

    def recallable(self) -> EngramStore | None:
        """The team's store when it has facts, else None; no Chroma call between looks."""
        if self._clock() - self._checked_at >= self.check_s:
            with self._lock:
                if self._clock() - self._checked_at >= self.check_s:
                    self._has_facts = self._look()
                    self._checked_at = self._clock()
        return self._store if self._has_facts else None

    def forget(self) -> None:
        """Look again at the next recall (this process just wrote or deleted one)."""
        self._checked_at = -math.inf

    def _look(self) -> bool:
        self.looks += 1
        try:
            if self._store is None:
                if not self._written():
                    return False
                self._store = self._open_store()
            return self._store.count() > 0
        except Exception as exc:  # recall goes on with the person's own memory
            log.warning("team facts unavailable: %s: %s", type(exc).__name__, exc)
            return False

    def _written(self) -> bool:
        """Whether any collection of the team's family exists (without creating one; its
        name under the short key of before counts too: opening the store moves it)."""
        from local2.memory._store import family  # chromadb: only once memory is in use

        if self._client is None:
            self._client = chroma_client(self.settings, "chroma")
        memory = self.settings.memory.collection
        bases = (collection_base(memory, TEAM_NAME), legacy_collection_base(memory, TEAM_NAME))
        return any(family(self._client, base) for base in bases if base)

    def opened(self) -> EngramStore | None:
        """The team's store if this process opened it (for closing)."""
        return self._store

    def release(self) -> None:
        """Let go of the client that looked for the team's collections."""

        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            release_client(client)


def as_team(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """Team hits, marked as such for the model, the app and the CLI."""
    return [{**hit, "kind": TEAM_KIND} for hit in hits]


def merged(own: list[MemoryHit], team: list[MemoryHit], k: int) -> list[MemoryHit]:
    """The person's hits and the team's, most similar first, at most ``k``; with no team
    hits the person's exactly as recalled. An engram both hold (same text, same id) is
    shown once, as the person's own."""
    if not team:
        return own
    mine = {hit["id"] for hit in own}
    both = own + [hit for hit in team if hit["id"] not in mine]
    return sorted(both, key=lambda hit: hit["similarity"], reverse=True)[:k]


def recall_with_team(
    store: EngramStore,
    team: EngramStore | None,
    query: str,
    k: int,
    *,
    kinds: Collection[str] | None = None,
    **options: Any,
) -> list[MemoryHit]:
    """``store``'s best ``k`` for ``query`` merged with ``team``'s (None: the team has no
    facts; then exactly ``store.recall``). One query embedding when both share the embedder
    (the shelf's stores do). ``kinds`` limits the person's own kinds only: every team fact
    is meant to be recalled. A failing team search leaves the person's own hits."""
    if team is None:
        return store.recall(query, k, kinds=kinds, **options)
    if not query.strip() or k <= 0:
        return []
    vector = store.embedder.embed_query(query)
    own = store.recall_vector(vector, k, kinds=kinds, **options)
    try:
        shared_vector = (
            vector if team.embedder is store.embedder else team.embedder.embed_query(query)
        )
        shared = as_team(team.recall_vector(shared_vector, k, **options))
    except Exception as exc:
        log.warning("team facts not recalled: %s: %s", type(exc).__name__, exc)
        shared = []
    return merged(own, shared, k)


# --- relevance --------------------------------------------------------------------------
# Whether a recalled memory is relevant enough to offer before the model answers.
#
# What memory holds is about the person ("The user's favourite colour is green."), so it
# answers a question about them ("What is my favourite colour?") or about someone it names as
# theirs ("How old is Duarte?" for "The user's son Duarte is seven"). Offered for any other
# question on a near topic, a small model answers with it: "Name three primary colours." was
# answered "The user's favourite colour is green."
#
# A similarity floor alone cannot tell these apart: with the offline MiniLM embedder the
# right fact for a question about the person scores as low as 0.25, while a general question
# on the same topic scores up to 0.78 ("What is lactose intolerance?" for "The user is lactose
# intolerant"); ``bench/recall_quality.py`` measures both. So the floor depends on the
# question: ``auto_recall_min_similarity`` for a question about the person or someone named
# as theirs, ``auto_recall_general_min_similarity`` (higher) for any other.

# "I", "my", "our", ... refer to the person; "tell me", "give me", ... only ask for the answer.
_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.I)
_ASKING = re.compile(
    r"\b(?:tell|give|show|help|let|teach|explain to|remind|send|find|get)\s+me\b", re.I
)
# A capitalised word not at a sentence's start: a name the question mentions.
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][\w'-]+)")
# What comes before a name the memory gives as the person's: "user's son ", "called ".
_THEIRS = r"(?:(?:user's|their|our)\s+(?:[a-z]+\s+){0,2}|(?:called|named)\s+)"


def about_the_person(question: str) -> bool:
    """Does the question refer to the person asking (not only ask them to be told)?"""
    return bool(_PERSON.search(_ASKING.sub(" ", question)))


def names_theirs(question: str, memory: str) -> bool:
    """Does the question name someone (or something) the memory says is the person's:
    a name right after "user's <relation>" or "called" ("The user's son Duarte", "a greyhound
    called Pixel"), not any proper noun it shares ("Berlin", "Radiohead")?"""
    for name in dict.fromkeys(_NAME.findall(question.strip())):
        if re.search(_THEIRS + re.escape(name) + r"\b", memory):
            return True
    return False


def offered(
    question: str, hits: Sequence[MemoryHit], personal_floor: float, general_floor: float
) -> list[MemoryHit]:
    """The hits relevant to ``question``: above ``personal_floor`` when it is about the person
    or names someone as theirs, else above ``general_floor``. A team fact is about the team,
    not the person, and written for everyone to be told: ``personal_floor`` is its floor."""
    personal = about_the_person(question)
    return [
        hit
        for hit in hits
        if hit["similarity"] >= general_floor
        or (
            hit["similarity"] >= personal_floor
            and (personal or hit["kind"] == TEAM_KIND or names_theirs(question, hit["content"]))
        )
    ]


# --- shelf ------------------------------------------------------------------------------
# Each person's memory: an engram store of their own, opened when first needed.
#
# Memory is per person: what Alice told LoCAL2 must never be recalled for Bob. Each owner's
# engrams are a collection family of their own (:mod:`local2.memory._owners`), not rows of one
# collection told apart by a metadata filter: a Chroma ``where`` on recall turns the HNSW
# search into a filtered scan (see :meth:`EngramStore.recall_vector
# <local2.memory._store.EngramStore.recall_vector>`), and separate collections keep people
# apart by construction (a bug in a filter cannot leak what a query never reaches).
#
# Local's store is the one opened at start (``services.memory``); another person's is opened
# on the same Chroma (embedded directory or server) with the same embedder, not loaded again,
# the first time their memory is needed, and kept until :meth:`MemoryShelf.close`.
#
# The team's shared facts (:mod:`local2.memory._shelf`) are on the shelf too, but never as an
# owner's: :meth:`MemoryShelf.of` refuses the team's name, so nothing that writes a person's
# memory (a turn's facts, ``save_memory``, ingest, ratings) can reach them;
# :meth:`MemoryShelf.team_facts` gives them for recall only.


class MemoryShelf:
    """Every owner's engram store around local's ``local`` (thread-safe; opened lazily)."""

    def __init__(self, local: EngramStore) -> None:
        self.local = local
        self._stores: dict[str, EngramStore] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.team = TeamFacts(local.settings, self._open_team)

    @classmethod
    def around(cls, memory: object) -> MemoryShelf | None:
        """A shelf around a real engram store; None for anything else (off, or a test's
        stand-in: other people then have no memory rather than a shared one)."""
        store_module = sys.modules.get("local2.memory._store")  # not imported: not a store
        if store_module is None or not isinstance(memory, store_module.EngramStore):
            return None
        return cls(memory)

    def of(self, owner: str | None) -> EngramStore:
        """``owner``'s store (None or ``local``: local's). Raises what opening raises
        (:class:`~local2.errors.MemoryStoreError`, a Chroma error), and nothing is kept:
        the next call tries again."""
        if is_local(owner):
            return self.local
        name = str(owner)
        if name == TEAM_NAME:  # e.g. a proxy naming someone "team": no memory, not the team's
            raise MemoryStoreError(
                f"'{TEAM_NAME}' is the team's shared facts, not a person's memory",
                "team facts are written with `local2 memory save --team` by local or an admin",
            )
        with self._lock:
            self._check_open()
            store = self._stores.get(name)
            if store is None:
                store = self._stores[name] = self._open(name)
        return store

    def team_facts(self) -> EngramStore | None:
        """The team's shared facts for recall, or None when there are none (looked at no
        more than every :data:`~local2.memory._shelf.TEAM_CHECK_S` seconds)."""
        with self._lock:
            self._check_open()
        return self.team.recallable()

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryStoreError("memory is closed: the app is shutting down", "start it again")

    def _open_team(self) -> EngramStore:
        with self._lock:
            self._check_open()
        return self._open(TEAM_NAME)

    def _open(self, name: str) -> EngramStore:
        """``name``'s store on local's Chroma, with local's embedder (not loaded again)."""
        # lazy: chromadb, numpy, local2.memory: ~636 ms, 705 modules at import
        from local2.memory._store import EngramStore

        store = EngramStore.open(
            self.local.settings, self.local.embedder, owner=name, owns_embedder=False
        )
        log.info("memory: opened %s's engrams (%s)", name, store.collection.name)
        return store

    def opened(self) -> list[str]:
        """The people whose memory is open here, besides local."""
        with self._lock:
            return sorted(self._stores)

    def close(self) -> None:
        """Close every person's store but local's (its opener closes it, and the embedder
        they all share)."""
        with self._lock:
            self._closed = True
            stores, self._stores = list(self._stores.values()), {}
            team = self.team.opened()
            if team is not None:
                stores.append(team)
        for store in stores:
            try:
                store.close()
            except Exception as exc:  # closing the rest matters more
                log.warning("memory: closing %s's store failed: %s", store.owner, exc)
        self.team.release()


# --- open -------------------------------------------------------------------------------
# Opening memory for a run: the engram store, or None with the reason the person is told.
#
# Memory is never off silently: when the store cannot be opened the app still answers, and the
# notice says why memory is off for this run.


def open_memory(settings: Settings) -> EngramStore | None:
    """The engram store, or None with a warning if it cannot be opened: the app still answers."""
    return open_memory_noting(settings)[0]


def open_memory_noting(settings: Settings) -> tuple[EngramStore | None, str | None]:
    """The engram store and what the person must be told about it: that memory runs on a
    fallback embedder, or that it is off for this run and why. Memory is never off silently."""
    if not settings.memory.enabled:
        return None, None
    try:
        # lazy: chromadb, numpy: ~0.6 s, 705 modules at import; a failing import is one more
        # reason memory is off for this run, said like the others
        from local2.memory._store import EngramStore

        store = EngramStore.open(settings)
    except Exception as exc:
        log.warning("memory disabled for this run: cannot open the engram store: %s", exc)
        return None, (
            f"Memory is off for this run: the engram store under {settings.data_dir} cannot "
            f"be opened ({type(exc).__name__}: {exc})."
        )
    return store, store.notice
