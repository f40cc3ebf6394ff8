"""People at the terminal, as a person would meet them: ``local2 users`` in real processes,
reading what reaches the terminal, and ``--as NAME`` seeing only that person's sessions,
history, audit records and runs (another's answering exactly as an unknown one does).

Sessions are made in-process by a real :class:`~local2.service.agent.Agent` (a scripted
model, real SQLite or Postgres) for people added with the CLI itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import load_settings
from local2.contracts._people import Person
from local2.models._scripted import ScriptedChatModel, reply
from local2.ports import free_port
from local2.service.agent import Agent
from local2.storage._open import open_people
from local2.storage._people import token_hash
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.processes import end_group
from local2_testkit.serve_process import ServeProcess
from tests.kit.helpers import bearer_clients, local2

NO_ENV: dict[str, str] = {}


def shown(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def added(name: str, *flags: str, env: dict[str, str] = NO_ENV) -> str:
    """``local2 users add NAME``: the token, which must be stdout's one and last line."""
    result = local2("users", "add", name, *flags, env=env)
    assert result.returncode == 0, shown(result)
    token = result.stdout.splitlines()[-1]
    assert result.stdout == token + "\n"  # alone, last, nothing after it
    assert token.startswith("l2_") and len(token) > 40
    assert token not in result.stderr  # shown once
    return token


def whose(token: str, **overrides: Any) -> str | None:
    people = open_people(load_settings(overrides=overrides or None))
    try:
        person = people.by_token(token)
    finally:
        people.close()
    return person.name if person else None


def test_add_list_rotate_remove_as_a_person_would() -> None:
    alice = added("alice")
    carol = added("carol", "--admin")
    assert whose(alice) == "alice" and whose(carol) == "carol"

    listed = local2("users", "list", env=NO_ENV)
    assert listed.returncode == 0, shown(listed)
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0][:3] == ["name", "admin", "added"]
    assert rows[1][0] == "alice" and "yes" not in rows[1]
    assert rows[2][:2] == ["carol", "yes"]
    for secret in (alice, carol, token_hash(alice), token_hash(carol)):
        assert secret not in shown(listed)
    as_json = json.loads(local2("users", "list", "--json", env=NO_ENV).stdout)
    assert [(r["name"], r["admin"]) for r in as_json] == [("alice", False), ("carol", True)]
    assert all(set(r) == {"name", "admin", "created_at", "rotated_at"} for r in as_json)

    rotated = local2("users", "rotate", "alice", env=NO_ENV)
    assert rotated.returncode == 0, shown(rotated)
    new = rotated.stdout.splitlines()[-1]
    assert rotated.stdout == new + "\n" and new != alice
    assert whose(alice) is None and whose(new) == "alice"  # the old one stopped working

    removed = local2("users", "remove", "alice", env=NO_ENV)
    assert removed.returncode == 0, shown(removed)
    assert whose(new) is None
    assert "alice" not in local2("users", "list", env=NO_ENV).stdout
    assert whose(carol) == "carol"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("users", "add", "Alice Smith"), "'Alice Smith' cannot be a person's name"),
        (("users", "add", "local"), "'local' is the name of this machine's own person"),
        (("users", "rotate", "nobody"), "No person 'nobody' here."),
        (("users", "remove", "nobody"), "No person 'nobody' here."),
        (("--as", "nobody", "sessions"), "--as nobody: there is no person 'nobody' here."),
        (("--as", "Bob", "sessions"), "--as Bob: 'Bob' cannot be a person's name"),
    ],
)
def test_a_bad_or_unknown_name_is_a_message_and_a_fix(args: tuple[str, ...], said: str) -> None:
    result = local2(*args, env=NO_ENV)
    assert result.returncode == 2, shown(result)
    assert said in result.stderr and "Fix: " in result.stderr
    assert "Traceback" not in shown(result) and result.stdout == ""


def test_adding_someone_twice_says_how_to_give_them_a_new_token() -> None:
    added("alice")
    again = local2("users", "add", "alice", env=NO_ENV)
    assert again.returncode == 2
    assert "'alice' is already a person here." in again.stderr
    assert "local2 users rotate alice" in again.stderr


def test_with_nobody_added_lists_say_so_and_nothing_is_created(isolated_home: Path) -> None:
    """Asking who there is, or reading the audit log, does not create the conversation
    store (nobody is configured when it does not exist)."""
    for args in (("users", "list"), ("users", "reads"), ("runs", "list")):
        result = local2(*args, env=NO_ENV)
        assert result.returncode == 0, shown(result)
    assert "Nobody added" in local2("users", "list", env=NO_ENV).stderr
    assert not (isolated_home / "checkpoints.sqlite").exists()


# -- --as on a local store -------------------------------------------------------------------


def ask_as(name: str, question: str, **overrides: Any) -> dict[str, Any]:
    """A turn of ``name``'s, through the real agent on the configured store."""
    model = ScriptedChatModel(replies=[reply(f"noted for {name}")], repeat_last=True)
    settings = load_settings(overrides=overrides or None)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    try:
        return agent.turns.ask(question, person=Person(name))
    finally:
        agent.close()


@pytest.fixture
def two_people() -> Iterator[dict[str, Any]]:
    """Alice and Bob (and Carol, an admin) added with the CLI; a session each."""
    tokens = {name: added(name) for name in ("alice", "bob")}
    tokens["carol"] = added("carol", "--admin")
    yield {
        "tokens": tokens,
        "alice": ask_as("alice", "Alice's private question"),
        "bob": ask_as("bob", "Bob's own question"),
    }


def same_as_unknown(args: list[str], other: str, unknown: str) -> subprocess.CompletedProcess:
    """Run ``args`` with ``other`` (someone else's id) and with ``unknown`` (nobody's): both
    must answer the same, word for word but the id."""
    theirs = local2(*[unknown if a == "ID" else a for a in args], env=NO_ENV)
    mine = local2(*[other if a == "ID" else a for a in args], env=NO_ENV)
    assert mine.returncode == theirs.returncode != 0, shown(mine)
    assert shown(mine).replace(other, "ID") == shown(theirs).replace(unknown, "ID")
    assert "Traceback" not in shown(mine)
    return mine


def test_as_bob_sees_only_bobs_sessions(two_people: dict[str, Any]) -> None:
    alice, bob = two_people["alice"], two_people["bob"]

    def listed(*who: str) -> list[str]:
        result = local2(*who, "sessions", "--json", env=NO_ENV)
        assert result.returncode == 0, shown(result)
        return [row["session_id"] for row in json.loads(result.stdout)]

    assert listed("--as", "bob") == [bob["session_id"]]
    assert listed("--as", "alice") == [alice["session_id"]]
    assert listed() == []  # local's: neither
    table = local2("--as", "bob", "sessions", env=NO_ENV)
    assert "Bob's own question" in table.stdout and "Alice" not in shown(table)

    history = local2("--as", "alice", "history", alice["session_id"], "--json", env=NO_ENV)
    assert history.returncode == 0 and json.loads(history.stdout), shown(history)
    refused = same_as_unknown(["--as", "bob", "history", "ID"], alice["session_id"], "never-was")
    assert refused.returncode == 3 and f"No session '{alice['session_id']}'" in refused.stderr
    truly_unknown = local2("history", "never-was", env=NO_ENV)  # local's, from the store itself
    assert shown(truly_unknown).replace("never-was", "ID") == shown(refused).replace(
        alice["session_id"], "ID"
    )
    rating = ["--as", "bob", "feedback", "ID", alice["query_id"], "--rating", "1"]
    same_as_unknown(rating, alice["session_id"], "never-was")
    retry = ["--as", "bob", "retry", "ID", alice["query_id"], "--show", "1"]
    same_as_unknown(retry, alice["session_id"], "never-was")


def test_as_bob_sees_none_of_alices_audit_records(two_people: dict[str, Any]) -> None:
    alice, bob = two_people["alice"], two_people["bob"]

    def logged(*who: str) -> list[str]:
        result = local2(*who, "runs", "list", "--json", env=NO_ENV)
        assert result.returncode == 0, shown(result)
        return [row["query_id"] for row in json.loads(result.stdout)]

    assert logged("--as", "bob") == [bob["query_id"]]
    assert logged("--as", "alice") == [alice["query_id"]]
    assert logged() == []
    session = ["--as", "bob", "runs", "list", "--session", alice["session_id"], "--json"]
    assert json.loads(local2(*session, env=NO_ENV).stdout) == []
    mine = local2("--as", "alice", "runs", "show", alice["query_id"], env=NO_ENV)
    assert json.loads(mine.stdout)["query"] == "Alice's private question"
    same_as_unknown(["--as", "bob", "runs", "show", "ID"], alice["query_id"], "0123456789ab")


def test_an_admins_reads_of_others_are_written_down(two_people: dict[str, Any]) -> None:
    alice = two_people["alice"]
    read = local2("--as", "carol", "history", alice["session_id"], "--json", env=NO_ENV)
    assert read.returncode == 0, shown(read)
    reads = json.loads(local2("users", "reads", "--json", env=NO_ENV).stdout)
    assert [(r["admin"], r["kind"], r["item"], r["owner"]) for r in reads] == [
        ("carol", "session", alice["session_id"], "alice")
    ]
    # Reading is all: an admin changes only their own.
    rating = ["--as", "carol", "feedback", alice["session_id"], alice["query_id"], "-r", "5"]
    assert local2(*rating, env=NO_ENV).returncode == 3


# -- --as on the team's Postgres --------------------------------------------------------------


def test_as_on_postgres_needs_an_admins_token(tmp_path: Path, postgres_url: str) -> None:
    config = tmp_path / "conf"
    config.mkdir()
    (config / "system.yaml").write_text("checkpointer: postgres\n")
    env = {"LOCAL2_CONFIG": str(config), "LOCAL2_POSTGRES_URL": postgres_url}
    tokens = {"bob": added("bob", env=env), "carol": added("carol", "--admin", env=env)}
    store = {"system": {"checkpointer": "postgres", "postgres_url": postgres_url}}
    assert whose(tokens["carol"], **store) == "carol"
    bob = ask_as("bob", "Bob's question on the team server", **store)
    as_bob = ("--as", "bob", "sessions", "--json")

    for token, said in (
        ("", "--as is refused on a shared store (system.checkpointer: postgres)"),
        ("l2_not-anyones", "LOCAL2_TOKEN holds no one's current token here"),
        (tokens["bob"], "LOCAL2_TOKEN is the token of 'bob', who is not an admin"),
    ):
        refused = local2(*as_bob, env={**env, "LOCAL2_TOKEN": token})
        assert refused.returncode == 2, shown(refused)
        assert said in refused.stderr and "Fix: export LOCAL2_TOKEN=" in refused.stderr
        assert refused.stdout == "" and "Traceback" not in shown(refused)
        assert token == "" or token not in shown(refused)

    allowed = local2(*as_bob, env={**env, "LOCAL2_TOKEN": tokens["carol"]})
    assert allowed.returncode == 0, shown(allowed)
    assert [r["session_id"] for r in json.loads(allowed.stdout)] == [bob["session_id"]]
    assert tokens["carol"] not in shown(allowed)
    reads = local2("users", "reads", "--json", env=env)
    assert [(r["admin"], r["kind"], r["item"]) for r in json.loads(reads.stdout)] == [
        ("carol", "as", "bob")
    ]


# -- serving beyond loopback with people --------------------------------------------------------


def test_serve_beyond_loopback_with_people_needs_no_single_token(tmp_path: Path) -> None:
    token = added("alice")
    config = tmp_path / "conf"
    config.mkdir()
    (config / "server.yaml").write_text("allowed_hosts: [local2.example.internal]\n")
    port = free_port()
    with FakeOllama() as fake:
        env = {**os.environ, "OLLAMA_HOST": fake.url, "LOCAL2_API_TOKEN": ""}
        command = [sys.executable, "-m", "local2.cli", "--config", str(config), "serve"]
        command += ["--no-ui", "--host", "0.0.0.0", "--port", str(port), "--backend", "ollama"]
        log = tmp_path / "serve.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        try:
            url = f"http://127.0.0.1:{port}/health"
            health = answered(process, url, {"Authorization": f"Bearer {token}"}, log)
            assert health.json()["person"] == "alice"
            assert httpx.get(url, timeout=10).status_code == 401  # nobody's request
        finally:
            end_group(process)


def test_a_server_beyond_loopback_stays_closed_when_its_last_person_goes(tmp_path: Path) -> None:
    """Bound to every address with people and no single token: once the last person is
    removed, a request that names no one gets 401 saying what to do (not local's answers),
    the app stays closed, and the old credentials stay dead when the name comes back."""
    token = added("alice")
    config = tmp_path / "conf"
    config.mkdir()
    (config / "server.yaml").write_text("allowed_hosts: [local2.example.internal]\n")
    with FakeOllama() as fake:
        server = ServeProcess(
            config,
            env={"OLLAMA_HOST": fake.url, "LOCAL2_API_TOKEN": ""},
            host="0.0.0.0",
            ui=True,
            args=("--backend", "ollama"),
        )
        with (
            server,
            bearer_clients(server.url, {"alice": token}) as api,
            httpx.Client(base_url=server.url, timeout=60) as nobody,
            httpx.Client(base_url=server.url, timeout=60) as browser,
        ):
            asked = api["alice"].post("/query", json={"query": "Hi", "session_id": "alice-1"})
            assert asked.status_code == 200, asked.text
            assert nobody.get("/health").status_code == 401
            signed_in = browser.post("/login", data={"username": "alice", "password": token})
            assert signed_in.status_code == 200

            assert local2("users", "remove", "alice", env=NO_ENV).returncode == 0
            for refused in (
                nobody.get("/health"),
                nobody.get("/sessions"),
                nobody.post("/query", json={"query": "Whose am I?"}),
            ):
                assert refused.status_code == 401, refused.text
                said = refused.json()["detail"]
                assert "nobody is added here and LOCAL2_API_TOKEN is not set" in said["error"]
                assert "local2 users add NAME" in said["fix"] and "LOCAL2_API_TOKEN" in said["fix"]
            assert api["alice"].get("/sessions").status_code == 401
            assert browser.get("/gradio_api/user").json() is None
            closed = nobody.get("/config")
            assert closed.status_code == 401
            assert "local2 users add NAME" in closed.json()["detail"]["auth_message"]
            assert nobody.get("/live").json() == {"status": "ok"}

            again = added("alice")  # the same name, a new token: the old ones stay dead
            assert api["alice"].get("/sessions").status_code == 401
            assert nobody.get("/health").status_code == 401
            with bearer_clients(server.url, {"alice": again}) as renewed:
                assert renewed["alice"].get("/health").json()["person"] == "alice"
                rotated = local2("users", "rotate", "alice", env=NO_ENV).stdout.strip()
                assert renewed["alice"].get("/health").status_code == 401
            with bearer_clients(server.url, {"alice": rotated}) as newest:
                assert [s["session_id"] for s in newest["alice"].get("/sessions").json()] == [
                    "alice-1"
                ]


def test_the_single_token_means_local_whatever_the_bind(tmp_path: Path) -> None:
    """On loopback with LOCAL2_API_TOKEN set, a client that always sends it gets in as
    local (nothing is asked of one that sends nothing, as always); a wrong token is 401.
    With people added, and after the last one goes, the single token still means local."""
    config = tmp_path / "conf"
    config.mkdir()
    single = "the-single-token"
    with (
        FakeOllama() as fake,
        ServeProcess(
            config,
            env={"OLLAMA_HOST": fake.url, "LOCAL2_API_TOKEN": single},
            args=("--backend", "ollama"),
        ) as server,
        bearer_clients(server.url, {"local": single, "wrong": "l2_not-anyones"}) as api,
        httpx.Client(base_url=server.url, timeout=60) as nobody,
    ):
        health = api["local"].get("/health")
        assert health.status_code == 200, health.text
        assert health.json()["person"] == "local"
        assert api["local"].post("/query", json={"query": "Hi"}).status_code == 200
        assert nobody.get("/health").json()["person"] == "local"  # loopback: nothing asked
        assert api["wrong"].get("/health").status_code == 401

        token = added("alice")
        with bearer_clients(server.url, {"alice": token}) as people:
            assert people["alice"].get("/health").json()["person"] == "alice"
        assert api["local"].get("/health").json()["person"] == "local"
        assert nobody.get("/health").status_code == 401  # people here: say who you are
        assert api["wrong"].get("/health").status_code == 401

        assert local2("users", "remove", "alice", env=NO_ENV).returncode == 0
        assert nobody.get("/health").json()["detail"] == "missing or wrong bearer token"
        assert api["local"].get("/health").json()["person"] == "local"


def answered(
    process: subprocess.Popen[bytes], url: str, headers: dict[str, str], log: Path
) -> httpx.Response:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(errors="replace")
        try:
            response = httpx.get(url, headers=headers, timeout=5)
            if response.status_code == 200:
                return response
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer: {log.read_text(errors='replace')}")


def test_only_an_admin_lists_everyones_sessions(two_people: dict[str, Any]) -> None:
    alice, bob = two_people["alice"], two_people["bob"]
    everyone = local2("--as", "carol", "sessions", "--everyone", "--json", env=NO_ENV)
    assert everyone.returncode == 0, shown(everyone)
    listed = {row["session_id"] for row in json.loads(everyone.stdout)}
    assert listed == {alice["session_id"], bob["session_id"]}
    reads = json.loads(local2("users", "reads", "--json", env=NO_ENV).stdout)
    assert [(r["admin"], r["kind"]) for r in reads] == [("carol", "list")]
    refused = local2("--as", "bob", "sessions", "--everyone", env=NO_ENV)
    assert refused.returncode == 2 and "Only an admin" in shown(refused)
    assert "Traceback" not in shown(refused) and alice["session_id"] not in shown(refused)
