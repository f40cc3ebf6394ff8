"""Memory is per person: each owner's engrams in collections of their own.

Unit level on real embedded Chroma (the offline lexical embedder): two owners' stores are
distinct collections, local's keeps its name, recall, reads, deletes, the memory tools,
queued annotations, the ingest retry queue and ``local2 memory`` each see only their owner's
engrams. End to end (the acceptance check of issue 29's memory part): Alice and Bob on the
real HTTP API (uvicorn + httpx, each with their bearer token), the real ``ChatOllama``
talking to the fake Ollama server, real Chroma memory. Alice tells twenty private facts,
Bob asks twenty questions about the same things: no request the model received during
Bob's turns holds any of Alice's facts, while Alice's own recall reaches her prompt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from typer.testing import CliRunner

from local2.cli._memory import memory_app
from local2.config import Settings
from local2.contracts._people import LOCAL, Person
from local2.graph._turn import RETRY_FILE, Services
from local2.graph._turn import remember_turn as ingest
from local2.http._app import create_api
from local2.memory import _store as per_embedder
from local2.memory import deferred
from local2.memory._facts import Fact
from local2.memory._owners import chroma_client, collection_base, owner_file
from local2.memory._shelf import MemoryShelf
from local2.memory._store import EngramStore
from local2.service.agent import Agent
from local2.tools._base import ToolContext
from local2.tools._memory_tools import memory_tools
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import bearer_clients, make_settings
from tests.kit.served import Served

# Chroma's rule for a collection name.
CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


@pytest.fixture(params=["embedded", "chroma-server"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Memory in embedded Chroma, or on a Chroma server a team shares (its own collection
    name per test: the server outlives the test)."""
    memory = {"embedder": "lexical"}
    if request.param == "chroma-server":
        server = request.getfixturevalue("chroma_server")
        memory.update(chroma_url=server.url, collection=f"pm-{uuid.uuid4().hex[:12]}")
    return make_settings(tmp_path, memory=memory)


@pytest.fixture
def shelf(settings: Settings) -> Iterator[MemoryShelf]:
    local = EngramStore.open(settings, sync="no")
    shelf = MemoryShelf(local)
    yield shelf
    shelf.close()
    local.close()


def recalled(store: EngramStore, query: str) -> list[str]:
    return [h["content"] for h in store.recall(query, 10, min_similarity=0.0, include_bad=True)]


# -- unit --------------------------------------------------------------------------------


def test_each_owner_has_collections_of_their_own_and_local_keeps_its_name(
    settings: Settings, shelf: MemoryShelf
) -> None:
    local = shelf.local
    base = settings.memory.collection
    assert local.collection.name == per_embedder.collection_name(base, local.embedder.name)
    assert shelf.of(None) is local and shelf.of("local") is local and shelf.of("") is local

    alice, bob = shelf.of("alice"), shelf.of("bob")
    assert shelf.of("alice") is alice  # opened once, kept
    assert alice.embedder is local.embedder  # shared, not loaded again
    names = {local.collection.name, alice.collection.name, bob.collection.name}
    assert len(names) == 3
    assert alice.collection.name.startswith(f"{base}-alice-")
    assert shelf.opened() == ["alice", "bob"]

    # No person's collection is taken for one of local's embedder collections (which would
    # be re-embedded into local's), nor one person's for another's.
    client = chroma_client(settings, "chroma")
    assert set(per_embedder.family(client, base)) == {local.collection.name}
    alice_base = collection_base(base, "alice")
    assert set(per_embedder.family(client, alice_base)) == {alice.collection.name}

    # Names a slug would merge stay apart; every name is one Chroma accepts.
    tricky = ["a.b", "a_b", "A.B", "a-b", "ab", "x" * 600, "Zoë Ångström", "...", "local2"]
    bases = [collection_base(base, name) for name in tricky]
    assert len(set(bases)) == len(tricky)
    for name in bases:
        full = per_embedder.collection_name(name, local.embedder.name)
        assert CHROMA_NAME.match(full) and ".." not in full, full
    assert collection_base(base, "local") == collection_base(base, None) == base


# Two names that shared one collection under the 40-bit keys of before: the same slug (the
# first 40 characters) and the same 10 hex digits of SHA-256, found by a birthday search over
# 1.8 million names in 3 seconds.
COLLIDING = (
    "mallory.and.alice.share.forty.bits.of.ke1678548",
    "mallory.and.alice.share.forty.bits.of.ke1803264",
)


def short_key(name: str) -> str:
    """The owner key of before, spelt out here: a slug and 10 hex digits of the hash."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    return f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def test_names_chosen_to_share_a_short_hash_keep_their_memories_apart(shelf: MemoryShelf) -> None:
    first, second = COLLIDING
    assert short_key(first) == short_key(second)  # under the old names: one collection
    mine, theirs = shelf.of(first), shelf.of(second)
    assert mine.collection.name != theirs.collection.name
    mine.save("My locker code is 4417-01.", session_id="m1", query_id="qm1")
    assert not any("4417" in text for text in recalled(theirs, "What is my locker code?"))
    assert theirs.count() == 0 and mine.count() == 1


def test_memory_under_the_short_key_of_before_is_moved_once_and_logged(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice's collection and retry queue as an earlier version named them (the 10-hex key)
    are renamed to the full key the first time her memory is opened, and the log says so;
    everything in them is still hers. Opening again moves and says nothing."""
    local = EngramStore.open(settings, sync="no")
    shelf = MemoryShelf(local)
    hers = shelf.of("alice")
    saved = hers.save("My locker code is 4417-01.", session_id="a1", query_id="qa1")
    full = hers.collection.name
    old_base = f"{settings.memory.collection}-{short_key('alice')}"
    old = per_embedder.collection_name(old_base, local.embedder.name)
    hers.collection.modify(name=old)  # as the earlier version left it
    shelf.close()
    queue = Path(settings.data_dir) / f"memory_retry.{short_key('alice')}.jsonl"
    queue.parent.mkdir(parents=True, exist_ok=True)  # (memory on a Chroma server: not yet)
    queue.write_text('{"pending": "hers"}\n')
    client = chroma_client(settings, "chroma")

    def names() -> set[str]:
        return {c if isinstance(c, str) else c.name for c in client.list_collections()}

    assert old in names() and full not in names()
    with caplog.at_level(logging.INFO, logger="local2.memory"):
        shelf = MemoryShelf(local)
        again = shelf.of("alice")
        moved = owner_file(Path(settings.data_dir) / RETRY_FILE, "alice")
    assert again.collection.name == full and old not in names()
    assert again.get(saved) is not None
    assert recalled(again, "What is my locker code?") == ["My locker code is 4417-01."]
    assert moved.read_text() == '{"pending": "hers"}\n' and not queue.exists()
    assert f"{old} renamed to {full}" in caplog.text and queue.name in caplog.text

    caplog.clear()
    shelf.close()
    with caplog.at_level(logging.INFO, logger="local2.memory"):
        shelf = MemoryShelf(local)
        assert shelf.of("alice").collection.name == full
        owner_file(Path(settings.data_dir) / RETRY_FILE, "alice")
    assert "renamed" not in caplog.text and "moved" not in caplog.text
    shelf.close()
    local.close()


def test_recall_for_bob_never_returns_alices_engrams(shelf: MemoryShelf) -> None:
    alice, bob, local = shelf.of("alice"), shelf.of("bob"), shelf.local
    saved = alice.save("My locker code is 4417-01.", session_id="a1", query_id="qa1")
    fact = alice.save_fact(
        Fact("The user's sister's name is Ines.", "sister name", "user_request", "rules"),
        session_id="a1",
        query_id="qa2",
    )
    alice.ingest_turn(
        session_id="a1",
        query_id="qa3",
        query="My bank PIN is 9083.",
        answer="Thanks for telling me.",
        tools_used=[],
        model="m",
    )
    bob.save("My locker is the blue one.", session_id="b1", query_id="qb1")

    for query in ("What is my locker code?", "my sister's name", "bank PIN 9083", "4417"):
        for other in (bob, local):
            assert not any(
                secret in text
                for text in recalled(other, query)
                for secret in ("4417", "Ines", "9083")
            )
    assert any("4417-01" in text for text in recalled(alice, "What is my locker code?"))
    assert any("Ines" in text for text in recalled(alice, "my sister's name"))
    assert recalled(bob, "locker") == ["My locker is the blue one."]

    # Reading, listing, exporting and deleting by id: someone else's id is unknown.
    assert bob.get(saved) is None and bob.get(fact.id) is None
    assert not bob.delete(saved) and not local.delete(saved)
    assert alice.get(saved) is not None
    assert {r["id"] for r in bob.iter_all()} == {bob.list()[0]["id"]}
    assert bob.count() == 1 and local.count() == 0 and alice.count() == 3

    # Closing the people's stores leaves the shared embedder to local's.
    shelf.close()
    assert recalled(local, "locker") == []
    assert local.embedder.embed_query("still works")


def test_memory_for_gives_each_owner_their_own_and_a_stand_in_to_local_only(
    settings: Settings, shelf: MemoryShelf
) -> None:
    chat = FakeListChatModel(responses=["unused"])
    real = Services(
        settings=settings,
        chat_model=chat,
        turn_log=None,  # type: ignore[arg-type]
        memory=shelf.local,
        memory_shelf=shelf,
    )
    assert real.memory_for(None) is shelf.local and real.memory_for("local") is shelf.local
    assert real.memory_for("bob") is shelf.of("bob")
    stand_in = object()
    fake = Services(
        settings=settings,
        chat_model=chat,
        turn_log=None,  # type: ignore[arg-type]
        memory=stand_in,  # type: ignore[arg-type]
        memory_shelf=MemoryShelf.around(stand_in),
    )
    assert fake.memory_shelf is None
    assert fake.memory_for("local") is stand_in and fake.memory_for("bob") is None


def test_memory_tools_read_and_write_the_callers_own_memory(
    settings: Settings, shelf: MemoryShelf
) -> None:
    tools = {t.name: t for t in memory_tools(shelf, settings)}
    as_alice = ToolContext(session_id="a1", query_id="qa1", owner="alice")
    as_bob = ToolContext(session_id="b1", query_id="qb1", owner="bob")
    saved = tools["save_memory"].run({"text": "My locker code is 4417-01."}, as_alice)
    assert "Saved to memory" in saved.text  # type: ignore[union-attr]

    for ctx in (as_bob, ToolContext(session_id="l1", query_id="ql1")):
        result = tools["recall_memory"].run({"query": "my locker code"}, ctx)
        assert result.text.startswith("No memories found")  # type: ignore[union-attr]
        assert result.data["memory_hits"] == []  # type: ignore[union-attr]
    found = tools["recall_memory"].run({"query": "my locker code"}, as_alice)
    assert "4417-01" in found.text  # type: ignore[union-attr]
    assert shelf.local.count() == 0 and shelf.of("bob").count() == 0


def test_an_annotation_waiting_for_memory_lands_in_its_owners_engram_only(
    settings: Settings, shelf: MemoryShelf
) -> None:
    alice, bob = shelf.of("alice"), shelf.of("bob")
    turn = {"session_id": "s", "query_id": "q1", "tools_used": [], "model": "m"}
    alice.ingest_turn(query="Alice asks", answer="Alice is answered", **turn)  # type: ignore[arg-type]
    bob.ingest_turn(query="Bob asks", answer="Bob is answered", **turn)  # type: ignore[arg-type]

    # Memory not open where the rating was given: it waits in Bob's own queue file.
    assert deferred.annotate(None, settings, "q1", owner="bob", reward=1.0) is None
    data = Path(settings.data_dir)
    assert not (data / deferred.FILE).exists()
    assert owner_file(data / deferred.FILE, "bob").exists()
    assert alice.catch_up() == 0 and shelf.local.catch_up() == 0
    assert bob.catch_up() == 1

    def reward(store: EngramStore) -> Any:
        return store.list(kind="episodic")[0].get("reward")

    assert reward(bob) == 1.0 and reward(alice) is None
    # Memory open: at once, in the owner's store.
    assert deferred.annotate(alice, settings, "q1", owner="alice", reward=5.0) == 1
    assert reward(alice) == 5.0 and reward(bob) == 1.0


def test_ingest_stores_the_turn_in_its_owners_memory_and_queues_it_for_them(
    settings: Settings, shelf: MemoryShelf, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = Services(
        settings=settings.model_copy(
            update={"memory": settings.memory.model_copy(update={"facts": "off"})}
        ),
        chat_model=FakeListChatModel(responses=["unused"]),
        turn_log=None,  # type: ignore[arg-type]
        memory=shelf.local,
        memory_shelf=shelf,
    )

    def state(qid: str, query: str) -> dict[str, Any]:
        return {
            "query": query,
            "answer": "Noted.",
            "session_id": "b1",
            "query_id": qid,
            "owner": "bob",
            "tool_calls": [],
            "started_at": 0.0,
        }

    bob = shelf.of("bob")
    real_ingest = bob.ingest_turn

    def down(**kwargs: Any) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(bob, "ingest_turn", down)
    failed = ingest(state("q1", "My locker code is 4417-01."), services)  # type: ignore[arg-type]
    assert failed["event_log"][0]["subject"] == "memory.ingest_failed"
    data = Path(settings.data_dir)
    queued = owner_file(data / RETRY_FILE, "bob")
    assert not (data / RETRY_FILE).exists()
    [record] = [json.loads(line) for line in queued.read_text().splitlines()]
    assert record["owner"] == "bob"

    monkeypatch.setattr(bob, "ingest_turn", real_ingest)
    done = ingest(state("q2", "My dog is called Rex."), services)  # type: ignore[arg-type]
    assert done["event_log"][0]["retried"] == 1
    assert sorted(r["query_id"] for r in bob.iter_all()) == ["q1", "q2"]
    assert shelf.local.count() == 0 and not queued.exists()


def test_local2_memory_acts_on_the_persons_own_memory(
    settings: Settings, shelf: MemoryShelf
) -> None:
    secret = shelf.of("alice").save("My locker code is 4417-01.", session_id="a", query_id="q")
    mine = shelf.of("bob").save("My locker is the blue one.", session_id="b", query_id="q")
    runner = CliRunner()

    def run(person: Person, *args: str) -> Any:
        return runner.invoke(memory_app, list(args), obj={"settings": settings, "person": person})

    listed = run(Person("bob"), "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["id"] for line in listed.output.splitlines()] == [mine]
    searched = run(Person("bob"), "search", "locker code 4417", "--json")
    assert secret not in searched.output and "4417" not in searched.output
    assert secret in run(Person("alice"), "search", "locker code", "--json").output

    unknown = run(Person("bob"), "delete", "m000000000000")
    someone_elses = run(Person("bob"), "delete", secret)
    assert someone_elses.exit_code == unknown.exit_code == 1
    assert someone_elses.output.replace(secret, "ID") == unknown.output.replace(
        "m000000000000", "ID"
    )
    assert someone_elses.output.startswith(f"No engram {secret}")
    assert shelf.of("alice").get(secret) is not None  # untouched
    assert run(LOCAL, "list", "--json").output == ""
    exported = run(Person("alice"), "export", str(Path(settings.data_dir) / "alice.jsonl"))
    assert exported.exit_code == 0 and "exported 1 memories" in exported.output
    deleted = run(Person("alice"), "delete", secret)
    assert deleted.exit_code == 0 and shelf.of("alice").count() == 0


# -- end to end: Alice and Bob on one server ---------------------------------------------

ALICE_SAYS = [  # (what she says, the secret in it no one else may be shown)
    ("My locker code is 4417-01.", "4417"),
    ("Remember that my sister's name is Marisol.", "Marisol"),
    ("My bank PIN is 9083.", "9083"),
    ("My dog's name is Biscuit.", "Biscuit"),
    ("Remember that my doctor is Dr. Okonkwo.", "Okonkwo"),
    ("My wifi password is tangerine-42.", "tangerine"),
    ("My passport number is X7731956.", "X7731956"),
    ("Remember that my blood type is AB negative.", "AB negative"),
    ("My salary is 87300 euros.", "87300"),
    ("My home address is 12 Rua das Flores.", "Rua das Flores"),
    ("Remember that my brother's name is Tomasz.", "Tomasz"),
    ("My favourite colour is vermilion.", "vermilion"),
    ("My car plate is 88-KL-12.", "88-KL-12"),
    ("Remember that my gym is Ironworks Lisbon.", "Ironworks"),
    ("My therapist is Dr. Vilanova.", "Vilanova"),
    ("My cat's name is Pimento.", "Pimento"),
    ("Remember that my birthday is on March 3rd.", "March 3rd"),
    ("My employer is Quantiva Labs.", "Quantiva"),
    ("My allergy is penicillin.", "penicillin"),
    ("Remember that my secret project is Bluefin.", "Bluefin"),
]
BOB_ASKS = [
    "What did I tell you earlier about my locker?",  # no memory yet: recall_memory is called
    "What is my locker code?",
    "What is my sister's name?",
    "What is my bank PIN?",
    "What is my dog's name?",
    "Who is my doctor?",
    "What is my wifi password?",
    "What is my passport number?",
    "What is my blood type?",
    "What is my salary?",
    "What is my home address?",
    "What is my brother's name?",
    "What is my favourite colour?",
    "What is my car plate?",
    "What is my gym?",
    "Who is my therapist?",
    "What is my cat's name?",
    "When is my birthday?",
    "Who is my employer?",
    "Do you remember my locker code and my sister's name?",
]


def leaked(bodies: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Which of Alice's secrets a request body holds: every message (system, user,
    assistant, tool), every tool call and every other field, as the server received it."""
    found = []
    for n, body in enumerate(bodies):
        text = json.dumps(body, ensure_ascii=False).lower()
        found += [(n, secret) for _, secret in ALICE_SAYS if secret.lower() in text]
    return found


@dataclass
class OnHttp:
    """People on the real HTTP API (uvicorn), memory on, the real ``ChatOllama`` talking to
    the fake Ollama server: the agent, the model server, and one client per person."""

    agent: Agent
    fake: FakeOllama
    clients: dict[str, httpx.Client]


@contextmanager
def people_on_http(tmp_path: Path, names: Iterable[str]) -> Iterator[OnHttp]:
    with FakeOllama(RuleBrain()) as fake:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": fake.url},
            generator={"backend": "ollama"},
            memory={"embedder": "lexical"},
        )
        agent = Agent(settings, backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in names}
        try:
            with Served(create_api(agent)) as url, bearer_clients(url, tokens) as clients:
                yield OnHttp(agent, fake, clients)
        finally:
            agent.close()


def test_alices_memory_never_reaches_bobs_prompts_over_http(tmp_path: Path) -> None:
    with people_on_http(tmp_path, ("alice", "bob")) as served:
        agent, fake = served.agent, served.fake
        alice, bob = served.clients["alice"], served.clients["bob"]

        def ask(client: httpx.Client, session: str, question: str) -> dict[str, Any]:
            response = client.post("/query", json={"query": question, "session_id": session})
            assert response.status_code == 200, response.text
            return response.json()

        for n, (said, _) in enumerate(ALICE_SAYS):
            answered = ask(alice, f"alice-{n // 5}", said)
            assert answered["answer"] and not answered.get("error")
        assert agent.turns.wait_idle(60)  # her turns' memory is written (ingest, critic)
        stored = agent.services.memory_for("alice")
        assert stored is not None and stored.count() >= len(ALICE_SAYS)

        before_bob = len(fake.requests)
        answers = [ask(bob, f"bob-{n}", q) for n, q in enumerate(BOB_ASKS)]
        assert agent.turns.wait_idle(60)
        bobs = fake.requests[before_bob:]

        # Bob's own prompts were built from memory too, just not Alice's.
        assert len([b for b in bobs if b.get("messages")]) >= len(BOB_ASKS)
        assert leaked(bobs) == []
        assert not any(
            secret.lower() in json.dumps(a).lower() for a in answers for _, secret in ALICE_SAYS
        )
        # His explicit memory search ran on his own (empty) memory.
        [call] = answers[0]["tool_calls"]
        assert call["tool"] == "recall_memory"
        assert call["result"].startswith("No memories found")

        # Alice's own recall reaches her prompt: what Bob was not shown was there.
        before_alice = len(fake.requests)
        hers = ask(alice, "alice-again", "What is my locker code?")
        assert "4417-01" in hers["answer"]
        assert any("4417-01" in h["content"] for h in hers["memory_hits"])
        assert any(s == "4417" for _, s in leaked(fake.requests[before_alice:]))


def test_names_chosen_to_collide_never_share_memory_over_http(tmp_path: Path) -> None:
    """Two people whose names shared a key of before, on the real HTTP API: what the first
    tells reaches neither the second's prompts nor their answer."""
    first, second = COLLIDING
    with people_on_http(tmp_path, COLLIDING) as served:
        told = served.clients[first].post("/query", json={"query": "My locker code is 4417-01."})
        assert told.status_code == 200, told.text
        assert served.agent.turns.wait_idle(60)  # the turn is in the first one's memory
        before = len(served.fake.requests)
        asked = served.clients[second].post("/query", json={"query": "What is my locker code?"})
        assert asked.status_code == 200, asked.text
        assert served.agent.turns.wait_idle(60)
        theirs = served.fake.requests[before:]
    assert theirs and not any("4417" in json.dumps(body) for body in theirs)
    assert "4417" not in asked.text
