"""People on LangGraph Server through the platform's own custom auth (local2.platform.auth)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from langgraph.store.memory import InMemoryStore

from local2.config import load_settings
from local2.contracts._people import LOCAL, Person
from local2.platform.auth import Roster
from local2.platform.graph import make_graph
from local2.platform.owners import OwnedStore
from local2.ports import free_port
from local2.service.sign_in import challenge
from local2.storage._open import open_people
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.conftest import make_settings
from tests.http.test_server_graph import LANGGRAPH, ROOT

QUESTION = "Tell me about the Python GIL."


def test_langgraph_json_names_the_auth() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    path, _, name = config["auth"]["path"].partition(":")
    assert (ROOT / path).is_file() and name == "auth"
    assert config["auth"]["disable_studio_auth"] is True  # Studio signs in like anyone else


def test_roster_knows_people_by_token_and_creates_no_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(tmp_path)
    roster = Roster(lambda: settings)
    assert roster.person(None, {}, "127.0.0.1") == (LOCAL, True)  # nobody: one person
    assert roster.person("Bearer l2_nobodys", {}, "127.0.0.1") == (None, False)
    store = settings.data_dir / "checkpoints.sqlite"
    assert not store.exists()  # the server keeps no local file of its own

    people = open_people(settings)
    alice, root = people.add("alice"), people.add("root", admin=True)
    assert roster.person(f"Bearer {alice}", {}, None) == (Person("alice"), False)
    assert roster.person(f"Bearer {root}", {}, None) == (Person("root", admin=True), False)
    assert roster.person(None, {}, "127.0.0.1") == (None, False)  # people here: say who
    monkeypatch.setenv("LOCAL2_API_TOKEN", "the-single-token")
    assert roster.person("Bearer the-single-token", {}, None) == (LOCAL, False)
    people.rotate("alice")
    assert roster.person(f"Bearer {alice}", {}, None) == (None, False)


def test_each_owner_has_their_own_part_of_the_store() -> None:
    store = InMemoryStore()
    alice, bob = OwnedStore(store, "alice"), OwnedStore(store, "bob")
    alice.put(("local2", "turns"), "t1", {"user": "hers"})
    store.put(("local2", "turns"), "t0", {"user": "local's"})
    (mine,) = alice.search(("local2", "turns"))
    assert (mine.namespace, mine.key, mine.value) == (("local2", "turns"), "t1", {"user": "hers"})
    assert alice.get(("local2", "turns"), "t0") is None
    assert bob.search(("local2", "turns")) == [] and bob.get(("local2", "turns"), "t1") is None
    assert store.get(("people", "alice", "local2", "turns"), "t1") is not None
    assert [i.key for i in store.search(("local2", "turns"))] == ["t0"]  # local's, unscoped
    assert alice.list_namespaces() == [("local2", "turns")]
    proxied = OwnedStore(store, "carol.b@example.com")  # a name a proxy may give
    proxied.put(("local2", "votes"), "v1", {"winner": "a"})
    assert store.get(("people", "carol%2Eb@example%2Ecom", "local2", "votes"), "v1")
    assert [i.key for i in proxied.search(("local2",))] == ["v1"]


def test_the_platform_graph_takes_the_owner_from_the_auth_not_the_input(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as fake:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": fake.url},
            generator={"backend": "ollama"},
            memory={"enabled": False},
            critic={"enabled": False},
        )
        store = InMemoryStore()
        graph = make_graph(settings, store=store)
        config = {"configurable": {"langgraph_auth_user_id": "alice"}}
        state = graph.invoke({"query": QUESTION, "owner": "bob"}, config)
        local = graph.invoke({"query": QUESTION, "owner": "bob"})
    assert state["owner"] == "alice" and local["owner"] == "local"
    (hers,) = store.search(("people", "alice", "local2", "turns"))
    assert hers.key == state["history_head"]
    assert [t.key for t in store.search(("local2", "turns"))] == [local["history_head"]]


@contextmanager
def langgraph_dev(tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """``langgraph dev`` on the shipped langgraph.json, from a stand-in for the checkout."""
    port = free_port()
    (tmp_path / "langgraph.json").write_text((ROOT / "langgraph.json").read_text())
    (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with (tmp_path / "langgraph.log").open("w") as log:
        server = subprocess.Popen(
            command,
            cwd=tmp_path,
            # no version check: its thread asks the package index (the network) and makes
            # a logging handler while uvicorn configures logging, a race that killed the
            # server at start-up under load ("'StreamHandler' object has no attribute
            # 'stream'")
            env={**os.environ, "LANGGRAPH_NO_VERSION_CHECK": "true", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, (tmp_path / "langgraph.log").read_text()
                assert time.monotonic() < deadline, "langgraph dev did not start"
                try:
                    if httpx.get(f"{base}/ok", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            yield base
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


def server_env(ollama_url: str, single_token: str) -> dict[str, str]:
    """The environment ``langgraph dev`` runs in: the model server, the single token ("":
    none), no analytics or tracing."""
    return {
        "OLLAMA_HOST": ollama_url,
        "LOCAL2_API_TOKEN": single_token,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
    }


def client(base: str, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=base, headers=headers, timeout=60)


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")
def test_people_on_langgraph_server_see_only_their_own(tmp_path: Path) -> None:
    people = open_people(load_settings())  # LOCAL2_HOME: the server's data directory too
    alice_token, bob_token = people.add("alice"), people.add("bob")
    root_token = people.add("root", admin=True)
    with FakeOllama(RuleBrain()) as fake:
        env = server_env(fake.url, "the-single-token")
        with (
            langgraph_dev(tmp_path, env) as base,
            client(base, alice_token) as alice,
            client(base, bob_token) as bob,
            client(base, root_token) as root,
            client(base, "the-single-token") as local,
            client(base, None) as nobody,
            client(base, "l2_not-anyones") as stranger,
        ):
            refusals = [c.post("/threads/search", json={}) for c in (nobody, stranger)]
            schemes = nobody.get("/openapi.json").json()["components"]["securitySchemes"]
            created = alice.post("/threads", json={"metadata": {"owner": "bob"}}).json()
            thread = created["thread_id"]
            run = alice.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "local2", "input": {"query": QUESTION, "owner": "bob"}},
            )
            state = alice.get(f"/threads/{thread}/state").json()
            unknown = str(uuid.uuid4())
            # Bob: alice's thread answers exactly like one that does not exist.
            bob_reads = {
                "get": (bob.get(f"/threads/{thread}"), bob.get(f"/threads/{unknown}")),
                "state": (
                    bob.get(f"/threads/{thread}/state"),
                    bob.get(f"/threads/{unknown}/state"),
                ),
                "run": tuple(
                    bob.post(
                        f"/threads/{t}/runs/wait",
                        json={"assistant_id": "local2", "input": {"query": "Mine now?"}},
                    )
                    for t in (thread, unknown)
                ),
                "patch": tuple(
                    bob.patch(f"/threads/{t}", json={"metadata": {"x": 1}})
                    for t in (thread, unknown)
                ),
                "delete": (bob.delete(f"/threads/{thread}"), bob.delete(f"/threads/{unknown}")),
            }
            taken = bob.post("/threads", json={"thread_id": thread, "if_exists": "do_nothing"})
            listed = {
                name: [t["thread_id"] for t in c.post("/threads/search", json={}).json()]
                for name, c in (("alice", alice), ("bob", bob), ("local", local), ("root", root))
            }
            turns = {
                name: c.post(
                    "/store/items/search", json={"namespace_prefix": ["local2", "turns"]}
                ).json()["items"]
                for name, c in (("alice", alice), ("bob", bob), ("local", local))
            }
            bob_in_hers = bob.post(
                "/store/items/search",
                json={"namespace_prefix": ["people", "alice", "local2", "turns"]},
            )
            # An admin reads anyone's, and each read of another's is written down.
            root_reads = root.get(f"/threads/{thread}")
            root_turns = root.post(
                "/store/items/search",
                json={"namespace_prefix": ["people", "alice", "local2", "turns"]},
            )
            root_lists_hers = root.post("/threads/search", json={"metadata": {"owner": "alice"}})
            root_run = root.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "local2", "input": {"query": "Mine now?"}},
            )
            still_hers = alice.get(f"/threads/{thread}").json()

    assert [r.status_code for r in refusals] == [401, 401]
    # The challenge the API and /mcp give: a host reads a static token, not an OAuth sign-in.
    challenges = [r.headers["www-authenticate"] for r in refusals]
    assert challenges == [challenge(None), challenge("Bearer l2_not-anyones")], challenges
    assert 'realm="LoCAL2"' in challenges[0] and "static bearer token" in challenges[0]
    assert 'error="invalid_token"' in challenges[1] and "error=" not in challenges[0]
    assert schemes["BearerAuth"]["scheme"] == "bearer"  # the API docs say how to sign in
    assert run.status_code == 200, run.text
    assert "Global Interpreter Lock" in run.json()["answer"]
    assert created["metadata"]["owner"] == "alice"  # the server's say, not the request's
    assert state["values"]["owner"] == "alice"  # memory and the turn log are hers
    for what, (hers, nobodys) in bob_reads.items():
        assert hers.status_code == nobodys.status_code == 404, (what, hers.text, nobodys.text)
    assert taken.status_code == 409  # an id that is taken is never handed over
    assert listed["alice"] == [thread] and listed["bob"] == [] and listed["local"] == []
    assert listed["root"] == []  # an admin's own list is their own
    assert [i["value"]["user"] for i in turns["alice"]] == [QUESTION]
    assert turns["alice"][0]["namespace"] == ["people", "alice", "local2", "turns"]
    assert turns["alice"][0]["value"]["session_id"] == thread
    assert turns["bob"] == [] and turns["local"] == []
    assert bob_in_hers.status_code == 403
    assert root_reads.status_code == 200 and root_reads.json()["thread_id"] == thread
    assert [i["value"]["user"] for i in root_turns.json()["items"]] == [QUESTION]
    assert [t["thread_id"] for t in root_lists_hers.json()] == [thread]
    assert root_run.status_code == 404  # writes are only ever one's own
    assert still_hers["metadata"]["owner"] == "alice" and still_hers["status"] == "idle"
    reads = {(r["admin"], r["kind"], r["item"], r["owner"]) for r in people.admin_reads()}
    assert reads == {
        ("root", "thread", thread, "alice"),
        ("root", "store", "local2.turns", "alice"),
        ("root", "threads", "search", "alice"),
    }


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")
def test_langgraph_server_stays_closed_when_its_last_person_goes(tmp_path: Path) -> None:
    """No single token, one person: once she is removed, a request that names no one gets
    401 saying what to do (not local's unfiltered view of every thread, hers included), and
    her old token stays dead when her name comes back."""
    people = open_people(load_settings())
    alice_token = people.add("alice")
    with FakeOllama(RuleBrain()) as fake:
        env = server_env(fake.url, "")
        with (
            langgraph_dev(tmp_path, env) as base,
            client(base, alice_token) as alice,
            client(base, None) as nobody,
        ):
            thread = alice.post("/threads", json={}).json()["thread_id"]
            while_hers = nobody.post("/threads/search", json={}).status_code
            people.remove("alice")
            searched = nobody.post("/threads/search", json={})
            read = nobody.get(f"/threads/{thread}")
            again = people.add("alice")
            old = alice.post("/threads/search", json={})
            with client(base, again) as renewed:
                mine = [t["thread_id"] for t in renewed.post("/threads/search", json={}).json()]

    assert while_hers == 401
    assert searched.status_code == 401, searched.text
    assert "local2 users add NAME" in searched.text and "LOCAL2_API_TOKEN" in searched.text
    assert read.status_code == 401 and thread not in read.text
    assert old.status_code == 401
    assert mine == [thread]
