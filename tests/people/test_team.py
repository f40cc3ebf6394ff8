"""Team scale end to end: two real ``local2 serve`` processes over one Postgres and one Chroma
server, a model server speaking Ollama's protocol, and concurrent clients.

Every session's history must hold each answered turn once, in order, with no turn of another
session in it, and every turn must have seen exactly the turns before it (two turns of one
session never ran at once, whichever process served them). Killing a process mid-turn loses
nothing that was already answered.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import chromadb
import httpx
import pytest

from local2.memory._store import collection_name
from local2_testkit.obeying import ObeyingBrain
from local2_testkit.ollama_server import FakeOllama, Reply
from local2_testkit.serve_process import ServeProcess
from tests.kit.helpers import local2

SESSIONS, TURNS = 16, 5
AFTER = re.compile(r"^(?P<question>.*) <- after \[(?P<before>.*)\]$", re.DOTALL)


def echo_brain(request: dict[str, Any]) -> Reply:
    """Answers with the question and every earlier question of the conversation it was shown."""
    asked = [m["content"] for m in request["messages"] if m.get("role") == "user"]
    return Reply(content=f"{asked[-1]} <- after [{' | '.join(asked[:-1])}]")


def write_config(directory: Path, ollama_url: str, chroma_url: str, collection: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "system.yaml").write_text(f"checkpointer: postgres\nollama_host: {ollama_url}\n")
    (directory / "generator.yaml").write_text("backend: ollama\nmodel: qwen3:4b\n")
    (directory / "memory.yaml").write_text(
        f"chroma_url: {chroma_url}\nembedder: ollama\ncollection: {collection}\n"
    )
    (directory / "critic.yaml").write_text("enabled: false\n")
    return directory


class Team:
    def __init__(self, root: Path, fake: FakeOllama, pg_url: str, chroma: Any) -> None:
        self.root, self.fake, self.pg_url, self.chroma = root, fake, pg_url, chroma
        self.collection = f"team-{root.name[-8:].lower().replace('_', '-')}"
        self.config = write_config(root / "conf", fake.url, chroma.url, self.collection)
        self.env = {"LOCAL2_POSTGRES_URL": pg_url, "LOCAL2_CONFIG": str(self.config)}
        self.servers: list[ServeProcess] = []

    def serve(self, *names: str) -> list[ServeProcess]:
        """Processes started side by side, each with its own data directory (nothing local
        is shared)."""
        started = [
            ServeProcess(self.config, env={**self.env, "LOCAL2_HOME": str(self.root / name)})
            for name in names
        ]
        self.servers += started
        for server in started:
            server.launch()
        return [server.wait_ready() for server in started]

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture
def team(tmp_path: Path, postgres_url: str, chroma_server: Any) -> Iterator[Team]:
    with FakeOllama(echo_brain, delay_s=0.1) as fake:
        crew = Team(tmp_path, fake, postgres_url, chroma_server)
        try:
            yield crew
        finally:
            crew.stop()


def ask(client: httpx.Client, url: str, session: str, question: str) -> dict[str, Any]:
    response = client.post(f"{url}/query", json={"query": question, "session_id": session})
    assert response.status_code == 200, response.text
    return response.json()


def history(url: str, session: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/sessions/{session}/history", timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["turns"]


def check_session(turns: list[dict[str, Any]], session: str) -> None:
    """Each turn once, all of this session, each having seen exactly the turns before it."""
    questions = [t["user"] for t in turns]
    assert len(set(questions)) == len(questions), f"duplicated turn in {session}: {questions}"
    assert all(q.startswith(f"[{session}]") for q in questions), f"cross-talk: {questions}"
    for i, turn in enumerate(turns):
        seen = AFTER.match(turn["assistant"])
        assert seen and seen["question"] == turn["user"], turn
        before = seen["before"].split(" | ") if seen["before"] else []
        assert before == questions[:i], f"{session} turn {i} saw {before}, not {questions[:i]}"


def test_two_processes_serve_interleaved_sessions_without_loss_or_crosstalk(team: Team) -> None:
    servers = team.serve("a", "b")
    sessions = [f"team-{n:02d}" for n in range(SESSIONS)]

    def converse(index: int) -> list[str]:
        session = sessions[index]
        sent = []
        with httpx.Client(timeout=120) as client:
            for turn in range(TURNS):  # alternate processes: any process serves any session
                question = f"[{session}] question {turn}"
                payload = ask(client, servers[(index + turn) % 2].url, session, question)
                assert payload["answer"].startswith(question)
                sent.append(question)
        return sent

    with ThreadPoolExecutor(SESSIONS) as pool:
        sent = dict(zip(sessions, pool.map(converse, range(SESSIONS)), strict=True))

    # Then two turns of every session at the same instant, one to each process.
    barrier = threading.Barrier(2 * SESSIONS)

    def race(job: tuple[str, int]) -> None:
        session, side = job
        with httpx.Client(timeout=120) as client:
            barrier.wait(60)
            ask(client, servers[side].url, session, f"[{session}] raced on {'ab'[side]}")

    with ThreadPoolExecutor(2 * SESSIONS) as pool:
        list(pool.map(race, [(s, side) for s in sessions for side in (0, 1)]))

    lost = duplicated = 0
    for n, session in enumerate(sessions):
        turns = history(servers[n % 2].url, session)
        questions = [t["user"] for t in turns]
        check_session(turns, session)
        assert questions[:TURNS] == sent[session]  # order kept
        assert sorted(questions[TURNS:]) == [f"[{session}] raced on a", f"[{session}] raced on b"]
        lost += len(set(sent[session]) - set(questions))
        duplicated += len(questions) - len(set(questions))
    assert (lost, duplicated) == (0, 0)

    # Every turn was remembered once, in the shared Chroma server, by whichever process ran it
    # (in the collection of the embedder both processes use).
    remote = chromadb.HttpClient(host="127.0.0.1", port=team.chroma.port)
    memory = remote.get_collection(collection_name(team.collection, "nomic-embed-text"))
    records = memory.get(where={"kind": "episodic"}, include=["metadatas"])["metadatas"]
    assert sorted(str(m["query_id"]) for m in records) == sorted(
        t["query_id"] for s in sessions for t in history(servers[0].url, s)
    )

    # The CLI reads the same database: every turn once, in order; replay works on it.
    env = {**team.env, "LOCAL2_HOME": str(team.root / "cli"), "OLLAMA_HOST": team.fake.url}
    shown = local2("history", sessions[3], "--limit", "200", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    published = [r for r in rows if r["node"] == "publish"]
    assert len(published) == TURNS + 2 and all(r["current"] for r in published)
    first_turn_start = next(r for r in reversed(rows) if r["next"] == ["generate"] and r["current"])
    replayed = local2(
        "replay",
        sessions[3],
        "--checkpoint",
        first_turn_start["checkpoint_id"],
        "--query",
        f"[{sessions[3]}] asked again",
        "--json",
        env=env,
    )
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["answer"] == f"[{sessions[3]}] asked again <- after []"
    assert [t["user"] for t in history(servers[0].url, sessions[3])] == [
        f"[{sessions[3]}] asked again"
    ]  # the session continues from the new branch, in every process


def test_killing_a_process_mid_turn_loses_nothing_answered(team: Team) -> None:
    a, b = team.serve("a", "b")
    session = "crash-1"
    with httpx.Client(timeout=60) as client:
        ask(client, a.url, session, f"[{session}] one")
        ask(client, b.url, session, f"[{session}] two")
        team.fake.delay_s = 30.0  # the next answer takes long: the process dies waiting
        asked_before = len(team.fake.chat_requests)
        failed: list[BaseException] = []

        def doomed() -> None:
            try:
                ask(client, a.url, session, f"[{session}] three (never answered)")
            except (httpx.HTTPError, AssertionError) as exc:
                failed.append(exc)

        waiting = threading.Thread(target=doomed)
        waiting.start()
        deadline = time.monotonic() + 30
        while len(team.fake.chat_requests) == asked_before:  # the model is being asked
            assert time.monotonic() < deadline, "the turn never reached the model"
            time.sleep(0.05)
        a.kill()
        waiting.join(30)
        assert failed, "the killed process cannot have answered"
        team.fake.delay_s = 0.1
        started = time.monotonic()
        ask(client, b.url, session, f"[{session}] four")
        assert time.monotonic() - started < 20  # the dead process's session lock went with it
    turns = history(b.url, session)
    check_session(turns, session)
    assert [t["user"] for t in turns] == [
        f"[{session}] one",
        f"[{session}] two",
        f"[{session}] four",
    ]


def test_a_turn_paused_for_approval_in_one_process_is_decided_in_the_other(
    tmp_path: Path, postgres_url: str, chroma_server: Any
) -> None:
    """The pause (LangGraph's interrupt) is in the Postgres checkpoints, so any process sees
    what waits, refuses a new turn of the session meanwhile, and can continue it."""
    note = "The team lunch moved to Fridays."
    with FakeOllama(ObeyingBrain(), delay_s=0.05) as fake:
        crew = Team(tmp_path, fake, postgres_url, chroma_server)
        (crew.config / "tools.yaml").write_text("approval: always\n")
        try:
            a, b = crew.serve("a", "b")
            session = "approve-1"
            with httpx.Client(timeout=120) as client:
                asked = f'Please call save_memory with {{"text": "{note}"}}'
                paused = ask(client, a.url, session, asked)
                assert paused["status"] == "awaiting_approval", paused
                [call] = paused["approval"]["calls"]
                assert call["tool"] == "save_memory" and call["args"] == {"text": note}

                seen = client.get(f"{b.url}/sessions/{session}/approval").json()["pending"]
                assert seen["calls"] == [call]
                refused = client.post(
                    f"{b.url}/query", json={"query": "Anything else?", "session_id": session}
                )
                assert refused.status_code == 409 and "approval" in refused.text

                done = client.post(f"{b.url}/sessions/{session}/approval", json={"approve": True})
                assert done.status_code == 200, done.text
                assert done.json()["status"] == "done"
                assert client.get(f"{a.url}/sessions/{session}/approval").json()["pending"] is None
            assert [t["user"] for t in history(a.url, session)] == [asked]
            remote = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
            memory = remote.get_collection(collection_name(crew.collection, "nomic-embed-text"))
            saved = memory.get(where={"kind": "saved"}, include=["documents"])["documents"]
            assert saved == [note]  # saved once, after the decision, in the shared memory
        finally:
            crew.stop()
