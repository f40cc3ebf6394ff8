"""Shared team facts: written only on purpose, recalled for everyone, marked as such.

At the terminal, as a person would (real ``local2`` processes): local and an admin may save
and delete team facts (``local2 memory save --team``), anyone else is refused (exit 2, saying
who may); ``team`` cannot be a person's name. End to end on the real HTTP API (uvicorn +
httpx, bearer tokens, the real ``ChatOllama`` against the fake Ollama server, real embedded
Chroma): Alice's and Bob's turns both carry the team fact in the prompt, marked as a team
fact, while Alice's private facts never reach Bob's; a turn whose model calls
``save_memory``, its fact extraction, the critic and a rating write nothing to the team's
store. And with no team facts, a turn sends the team's store no query at all.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection

from local2.config import Settings, load_settings
from local2.contracts._people import LOCAL, TEAM_NAME, Person, may_write_team_facts
from local2.contracts._records import MemoryHit
from local2.errors import InvalidInput, MemoryStoreError, ToolError
from local2.graph._turn import TEAM_NOTE, Services
from local2.http._app import create_api
from local2.memory import _store as per_embedder
from local2.memory._owners import chroma_client, collection_base
from local2.memory._shelf import TEAM_KIND, MemoryShelf, TeamFacts, merged
from local2.memory._store import EngramStore
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.service.desks._memory import MemoryDesk
from local2.storage._people import check_name
from local2.tools._base import ToolContext
from local2.tools._memory_tools import memory_tools
from local2_testkit.brains import Reply, RuleBrain, message_text, tool_names
from local2_testkit.ollama_server import FakeOllama
from tests.kit.helpers import bearer_clients, local2
from tests.kit.served import Served

WIFI = "The office wifi password rotates on Mondays."
FREEZE = "Deploys are frozen on Fridays after noon."
TEAM_MARK = "team fact, shared by everyone on this team"
NO_ENV: dict[str, str] = {}


@pytest.fixture(autouse=True)
def lexical_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every process of a test (the CLI's and this one) on the same configuration: the data
    directory of the isolated home, memory on the offline lexical embedder."""
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "memory.yaml").write_text("embedder: lexical\n")
    monkeypatch.setenv("LOCAL2_CONFIG", str(directory))
    return directory


def shown(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def added(name: str, *flags: str) -> str:
    result = local2("users", "add", name, *flags, env=NO_ENV)
    assert result.returncode == 0, shown(result)
    return result.stdout.splitlines()[-1]


def saved_id(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, shown(result)
    found = re.search(r"saved (m[0-9a-f]+)", result.stdout)
    assert found, result.stdout
    return found.group(1)


def team_rows() -> list[dict[str, Any]]:
    """The team's engrams as stored (read in this process, as any other would)."""
    store = EngramStore.open(load_settings(), sync="no", owner=TEAM_NAME)
    try:
        return list(store.iter_all())
    finally:
        store.close()


def team_collections(settings: Settings) -> dict[str, Any]:
    client = chroma_client(settings, "chroma")
    return per_embedder.family(client, collection_base(settings.memory.collection, TEAM_NAME))


# -- who may write them ----------------------------------------------------------------------


def test_team_is_no_ones_name() -> None:
    with pytest.raises(InvalidInput, match="team's shared facts"):
        check_name(TEAM_NAME)
    result = local2("users", "add", "team", env=NO_ENV)
    assert result.returncode == 2, shown(result)
    assert "'team' is reserved for the team's shared facts" in result.stderr
    assert "Fix: " in result.stderr and result.stdout == ""
    added("alice")
    acting = local2("--as", "team", "memory", "list", env=NO_ENV)
    assert acting.returncode == 2 and "--as team: 'team' is reserved" in acting.stderr
    assert may_write_team_facts(LOCAL) and may_write_team_facts(Person("carol", admin=True))
    assert not may_write_team_facts(Person("bob"))


def test_only_local_or_an_admin_saves_or_deletes_team_facts() -> None:
    added("bob")
    added("carol", "--admin")

    wifi = saved_id(local2("memory", "save", "--team", WIFI, env=NO_ENV))
    refused = local2("--as", "bob", "memory", "save", "--team", "The deploy key is X.", env=NO_ENV)
    assert refused.returncode == 2, shown(refused)
    assert "Only local (this terminal without --as) or an admin" in refused.stderr
    assert "'bob' is not an admin" in refused.stderr and "Fix: " in refused.stderr
    assert refused.stdout == ""
    freeze = saved_id(local2("--as", "carol", "memory", "save", "--team", FREEZE, env=NO_ENV))

    rows = {row["id"]: row for row in team_rows()}
    assert set(rows) == {wifi, freeze}
    assert rows[wifi]["content"] == WIFI and rows[wifi]["written_by"] == "local"
    assert rows[freeze]["written_by"] == "carol" and rows[freeze]["source"] == "team"

    # Everyone reads them: listed and searched by Bob, marked as the team's.
    listed = local2("--as", "bob", "memory", "list", "--team", "--json", env=NO_ENV)
    assert listed.returncode == 0, shown(listed)
    assert {json.loads(line)["id"] for line in listed.stdout.splitlines()} == {wifi, freeze}
    searched = local2("--as", "bob", "memory", "search", "wifi password", "--json", env=NO_ENV)
    hits = [json.loads(line) for line in searched.stdout.splitlines()]
    assert hits and hits[0]["id"] == wifi and hits[0]["kind"] == TEAM_KIND
    table = local2("--as", "bob", "memory", "search", "wifi password", env=NO_ENV)
    assert re.search(rf"{wifi}.*\bteam\b", table.stdout), table.stdout

    # Bob's own save stays his; he cannot delete a team fact; local can.
    mine = saved_id(local2("--as", "bob", "memory", "save", "My desk is 4B.", env=NO_ENV))
    assert mine not in {row["id"] for row in team_rows()}
    not_his = local2("--as", "bob", "memory", "delete", "--team", wifi, env=NO_ENV)
    assert not_his.returncode == 2 and "Only local" in not_his.stderr
    assert local2("memory", "delete", "--team", freeze, env=NO_ENV).returncode == 0
    assert [row["id"] for row in team_rows()] == [wifi]


def test_the_services_memory_desk_is_what_the_commands_do(tmp_path: Path) -> None:
    """``local2 memory`` builds nothing below the service: the desk checks who may write the
    team's facts (refused before any team collection exists), saves, searches the person's
    own memory with the team's beside it, deletes only what is theirs, exports, re-embeds."""
    settings = load_settings()
    bob = MemoryDesk(settings, Person("bob"))
    bob_team = MemoryDesk(settings, Person("bob"), team=True)
    local_team = MemoryDesk(settings, LOCAL, team=True)
    try:
        with pytest.raises(InvalidInput, match="'bob' is not an admin") as refused:
            bob_team.save("The deploy key is X.")
        assert "--as an admin" in refused.value.fix
        with pytest.raises(InvalidInput, match="Only local"):
            bob_team.delete("m000000000000")
        assert team_collections(settings) == {}  # a refused write opened nothing
        with pytest.raises(InvalidInput, match="Nothing to save"):
            bob.save("  ")

        wifi = local_team.save(WIFI)
        mine = bob.save("My wifi router is in the attic.")
        assert [row["id"] for row in bob_team.engrams()] == [wifi]
        own = bob.engrams()
        assert [row["id"] for row in own] == [mine] and own[0]["written_by"] == "bob"
        assert own[0]["source"] == "cli" and bob.count() == 1

        hits = bob.search("wifi password", k=5)
        assert {hit["id"]: hit["kind"] for hit in hits} == {wifi: TEAM_KIND, mine: "saved"}
        rows = {row["id"]: row for row in bob.stored(hits)}
        assert rows[wifi]["written_by"] == "local" and rows[wifi]["kind"] == TEAM_KIND
        assert rows[mine]["source"] == "cli"
        assert [hit["kind"] for hit in bob_team.search("wifi", k=5)] == [TEAM_KIND]

        assert not bob.delete(wifi)  # the team's is not his to delete as his own
        assert bob.export(tmp_path / "bob.jsonl") == 1
        done = bob.reembed(rebuild=True)
        assert done.embedded == 1 and done.stored == 1 and done.embedder.startswith("lexical")
        assert bob.delete(mine) and bob.count() == 0
        assert [row["id"] for row in bob_team.engrams()] == [wifi]
    finally:
        for desk in (bob, bob_team, local_team):
            desk.close()


# -- recall: cached, merged, marked ---------------------------------------------------------


def hit(eid: str, similarity: float, kind: str = "saved") -> MemoryHit:
    return {
        "id": eid,
        "content": eid,
        "similarity": similarity,
        "age_s": 1.0,
        "reward": None,
        "critic_score": None,
        "kind": kind,
    }


def test_hits_merge_by_similarity_and_none_from_the_team_changes_nothing() -> None:
    own = [hit("a", 0.4), hit("b", 0.9)]  # as ranked (reward and recency count there)
    assert merged(own, [], 3) is own
    team = [hit("t", 0.7, TEAM_KIND), hit("a", 0.4, TEAM_KIND)]
    assert [h["id"] for h in merged(own, team, 3)] == ["b", "t", "a"]
    assert [h["kind"] for h in merged(own, team, 2)] == ["saved", TEAM_KIND]


@pytest.fixture
def shelf(tmp_path: Path) -> Iterator[MemoryShelf]:
    local = EngramStore.open(load_settings(), sync="no")
    shelf = MemoryShelf(local)
    yield shelf
    shelf.close()
    local.close()


def test_the_team_is_looked_at_once_per_interval_and_never_created(shelf: MemoryShelf) -> None:
    now = [0.0]
    settings = shelf.local.settings

    def open_team() -> EngramStore:
        return EngramStore.open(
            settings, shelf.local.embedder, sync="no", owner=TEAM_NAME, owns_embedder=False
        )

    facts = TeamFacts(settings, open_team, clock=lambda: now[0])
    assert facts.recallable() is None and facts.recallable() is None
    assert facts.looks == 1
    assert team_collections(shelf.local.settings) == {}  # looking created nothing

    writer = EngramStore.open(shelf.local.settings, sync="no", owner=TEAM_NAME)
    writer.save(WIFI, session_id="", query_id="")
    now[0] += facts.check_s - 1
    assert facts.recallable() is None and facts.looks == 1  # stale for at most check_s
    now[0] += 1
    team = facts.recallable()
    assert team is not None and team.count() == 1 and facts.looks == 2
    team.close()
    writer.close()


def test_no_owner_reaches_the_teams_store_for_writing(shelf: MemoryShelf) -> None:
    """Someone a proxy names 'team' gets no memory, not the team's."""
    with pytest.raises(MemoryStoreError, match="team's shared facts"):
        shelf.of(TEAM_NAME)
    services = Services(
        settings=shelf.local.settings,
        chat_model=ScriptedChatModel(replies=[reply("unused")]),
        turn_log=None,  # type: ignore[arg-type]
        memory=shelf.local,
        memory_shelf=shelf,
    )
    assert services.memory_for(TEAM_NAME) is None
    tools = {t.name: t for t in memory_tools(shelf, shelf.local.settings)}
    with pytest.raises(ToolError, match="memory is unavailable"):
        tools["save_memory"].run(
            {"text": "The wifi password is hunter2."},
            ToolContext(session_id="s", query_id="q", owner=TEAM_NAME),
        )
    assert team_collections(shelf.local.settings) == {}


def test_recall_memory_finds_the_team_fact_beside_the_callers_own(shelf: MemoryShelf) -> None:
    writer = EngramStore.open(shelf.local.settings, sync="no", owner=TEAM_NAME)
    writer.save(WIFI, session_id="", query_id="")
    writer.close()
    shelf.of("bob").save("My wifi router is in the attic.", session_id="b", query_id="q")
    tools = {t.name: t for t in memory_tools(shelf, shelf.local.settings)}
    result = tools["recall_memory"].run(
        {"query": "wifi password"}, ToolContext(session_id="b", query_id="q2", owner="bob")
    )
    hits = result.data["memory_hits"]  # type: ignore[union-attr]
    assert {h["kind"] for h in hits} == {"saved", TEAM_KIND}
    line = next(line for line in result.text.splitlines() if WIFI in line)  # type: ignore[union-attr]
    assert TEAM_MARK in line


class QueryLog:
    """Every query sent to a Chroma collection in this process, by collection name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        real = Collection.query

        def query(collection: Collection, *args: Any, **kwargs: Any) -> Any:
            self.names.append(collection.name)
            return real(collection, *args, **kwargs)

        monkeypatch.setattr(Collection, "query", query)


def test_with_no_team_facts_a_turn_queries_only_the_persons_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings()
    model = ScriptedChatModel(replies=[reply("Noted.")], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], critic=None)
    team_base = collection_base(settings.memory.collection, TEAM_NAME)
    try:
        shelf = agent.services.memory_shelf
        assert shelf is not None
        queries = QueryLog(monkeypatch)
        for n in range(4):
            agent.turns.ask(f"My wifi router number {n} is in the attic.", person=Person("alice"))
        agent.turns.ask("Where is my wifi router?", person=Person("alice"))
        assert queries.names and not any(n.startswith(team_base) for n in queries.names)
        assert shelf.team.looks == 1  # once in the interval, not once per turn
        assert team_collections(settings) == {}

        # A first team fact written elsewhere is recalled once the interval has passed.
        writer = EngramStore.open(settings, sync="no", owner=TEAM_NAME)
        writer.save(WIFI, session_id="", query_id="")
        writer.close()
        shelf.team.check_s = 0.0
        answered = agent.turns.ask("When does the office wifi password rotate?", person=LOCAL)
        assert any(n.startswith(team_base) for n in queries.names)
        assert [h["kind"] for h in answered["memory_hits"]][:1] == [TEAM_KIND]
    finally:
        agent.close()


# -- end to end: Alice and Bob on one server ----------------------------------------------

NOTE_FOR_LATER = "For later: "  # no "remember"/"note": the model chooses to save
WIFI_QUESTION = "When does the office wifi password rotate?"


class SavingBrain:
    """The rule brain, except that a message starting "For later:" is answered
    by calling ``save_memory`` with the rest (the model's own choice to save)."""

    def __init__(self) -> None:
        self.rules = RuleBrain()

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        last = message_text(messages[-1]) if messages else ""
        if "save_memory" in tool_names(request) and messages[-1].get("role") == "user":
            said = last.rsplit("\n\n", 1)[-1]  # after the memory block, if any
            if said.startswith(NOTE_FOR_LATER):
                text = said.removeprefix(NOTE_FOR_LATER)
                return Reply(tool_calls=[{"name": "save_memory", "arguments": {"text": text}}])
        return self.rules(request)


def prompts(bodies: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(body, ensure_ascii=False) for body in bodies)


def test_team_facts_reach_everyones_prompt_marked_and_nothing_a_turn_does_writes_them() -> None:
    wifi = saved_id(local2("memory", "save", "--team", WIFI, env=NO_ENV))
    with FakeOllama(SavingBrain()) as fake:
        settings = load_settings(
            overrides={"system": {"ollama_host": fake.url}, "generator": {"backend": "ollama"}}
        )
        agent = Agent(settings, backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        try:
            with Served(create_api(agent)) as url, bearer_clients(url, tokens) as clients:

                def ask(name: str, session: str, question: str) -> dict[str, Any]:
                    response = clients[name].post(
                        "/query", json={"query": question, "session_id": session}
                    )
                    assert response.status_code == 200, response.text
                    assert agent.turns.wait_idle(60)  # its memory is written (ingest, critic)
                    return response.json()

                ask("alice", "alice-1", "Remember that my locker code is 4417-01.")
                ask("alice", "alice-1", "My wifi router at home is called Bluefin.")
                for name in ("alice", "bob"):
                    before = len(fake.requests)
                    answered = ask(name, f"{name}-wifi", WIFI_QUESTION)
                    theirs = prompts(fake.requests[before:])
                    assert WIFI in theirs and TEAM_MARK in theirs and TEAM_NOTE in theirs
                    [team_hit] = [h for h in answered["memory_hits"] if h["id"] == wifi]
                    assert team_hit["kind"] == TEAM_KIND
                    if name == "bob":
                        assert wifi in answered["answer"]  # answered from it, citing it
                        assert "4417" not in theirs and "Bluefin" not in theirs
                        bobs_wifi = answered

                # Rated, graded and compared by query id in the owner's store only.
                rated = clients["bob"].post(
                    "/feedback",
                    json={
                        "session_id": "bob-wifi",
                        "query_id": bobs_wifi["query_id"],
                        "rating": 1,
                    },
                )
                assert rated.status_code == 200, rated.text

                # The model's own save_memory, and the facts of the turn, go to Bob's memory.
                said = ask("bob", "bob-2", f"{NOTE_FOR_LATER}The office wifi password is hunter2.")
                assert [c["tool"] for c in said["tool_calls"]] == ["save_memory"]
                bob = agent.services.memory_for("bob")
                assert bob is not None
                assert any("hunter2" in row["content"] for row in bob.iter_all())
                ask("bob", "bob-2", "Remember that the office wifi password is hunter2.")
        finally:
            agent.close()
    [row] = team_rows()  # untouched: no new engram, no rating, no critic grade
    assert row["id"] == wifi and row["content"] == WIFI
    assert row.get("reward") is None and row.get("critic_score") is None and not row["bad"]
