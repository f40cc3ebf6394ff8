"""People on a team server, end to end: two real ``local2 serve`` processes over one Postgres,
alice and bob each with a token of their own, their turns sent alternately to the two
processes, all at once.

Nothing is lost: every answered turn is in its owner's history, read from either process.
Nothing crosses: each one's list shows only their own sessions, and reading, continuing or
rating the other's session answers 404 exactly as an unknown id does and changes nothing,
whether tried while the turns run or afterwards; two people starting the same new session id
at the same instant get one owner. Every loss and crossing is counted, and both counts must
be 0.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.storage._open import open_people
from local2_testkit.ollama_server import FakeOllama, Reply
from local2_testkit.serve_process import ServeProcess
from tests.kit.helpers import make_settings

PEOPLE = ("alice", "bob")
SESSIONS_EACH, TURNS, RACES = 4, 4, 4


def brain(request: dict[str, Any]) -> Reply:
    """Answers with the question it was asked, so every answer says whose turn it was."""
    asked = [m["content"] for m in request["messages"] if m.get("role") == "user"]
    return Reply(content=f"answered: {asked[-1]}")


def write_config(directory: Path, ollama_url: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "system.yaml").write_text(f"checkpointer: postgres\nollama_host: {ollama_url}\n")
    (directory / "generator.yaml").write_text("backend: ollama\nmodel: qwen3:4b\n")
    (directory / "memory.yaml").write_text('embedder: ollama\nfacts: "off"\n')
    (directory / "critic.yaml").write_text("enabled: false\n")
    return directory


def other_of(person: str) -> str:
    return PEOPLE[1 - PEOPLE.index(person)]


@dataclass
class Team:
    fake: FakeOllama
    urls: list[str]
    tokens: dict[str, str]

    def client(self, person: str) -> httpx.Client:
        return httpx.Client(timeout=120, headers={"Authorization": f"Bearer {self.tokens[person]}"})


@pytest.fixture
def team(tmp_path: Path, postgres_url: str) -> Iterator[Team]:
    settings = make_settings(
        tmp_path, system={"checkpointer": "postgres", "postgres_url": postgres_url}
    )
    with FakeOllama(brain, delay_s=0.05) as fake:
        config = write_config(tmp_path / "conf", fake.url)
        env = {"LOCAL2_POSTGRES_URL": postgres_url, "LOCAL2_CONFIG": str(config)}
        servers = [
            ServeProcess(config, env={**env, "LOCAL2_HOME": str(tmp_path / name)})
            for name in ("a", "b")
        ]
        try:
            for server in servers:
                server.launch()
            urls = [server.wait_ready().url for server in servers]
            # Added while the processes run (as `local2 users add` on a live server): every
            # request asks the store whether anyone is configured. (Before start, the
            # readiness probe's anonymous GET /health would be refused.)
            with closing(open_people(settings)) as people:  # type: ignore[type-var]
                tokens = {name: people.add(name) for name in PEOPLE}
            yield Team(fake, urls, tokens)
        finally:
            for server in servers:
                server.stop()


@dataclass
class Tally:
    """What crossed from one person to the other, what was lost, and how much was tried."""

    crossed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    probes: int = 0
    guard: threading.Lock = field(default_factory=threading.Lock)

    def probe(self, refused: bool, what: str) -> None:
        with self.guard:
            self.probes += 1
            if not refused:
                self.crossed.append(what)

    def summary(self) -> str:
        return (
            f"{len(self.crossed)} crossed, {len(self.lost)} lost ({self.probes} cross attempts)"
            f"\ncrossed: {self.crossed[:10]}\nlost: {self.lost[:10]}"
        )


@dataclass
class Answered:
    """Each session's answered turns so far, as ``(question, query_id)``, shared by threads."""

    turns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def add(self, session: str, question: str, query_id: str) -> None:
        with self.guard:
            self.turns.setdefault(session, []).append((question, query_id))

    def first(self, session: str) -> tuple[str, str] | None:
        with self.guard:
            return (self.turns.get(session) or [None])[0]


def session_of(person: str, index: int) -> str:
    return f"{person}-{index}"


def history(client: httpx.Client, url: str, session: str) -> dict[str, Any] | None:
    """The session's turns and checkpoints as its owner reads them, or None (404)."""
    response = client.get(f"{url}/sessions/{session}/history", params={"limit": 1000})
    assert response.status_code in (200, 404), response.text
    return response.json() if response.status_code == 200 else None


def settled(client: httpx.Client, url: str, session: str) -> dict[str, Any] | None:
    """The session's history once nothing more is being written to it, or None if it never
    answers. (The answer is handed over at publish and the turn's checkpoints are written
    in the background: just after a first answer, its session may still answer 404.)"""
    deadline, last = time.monotonic() + 60, None
    while time.monotonic() < deadline:
        now = history(client, url, session)
        if now is not None and now == last:
            return now
        last = now
        time.sleep(0.5)
    return last


def intrusions(
    client: httpx.Client, url: str, victim_session: str, query_id: str, note: str
) -> list[tuple[str, httpx.Response, httpx.Response]]:
    """Read, continue and rate ``victim_session``: ``(what, its answer, what an id nobody
    has used answers)``. (A turn into an unused id would start a new session, so the
    refused turn is held against the unknown id's history.)"""
    ghost = f"ghost-{victim_session}"
    unknown_read = client.get(f"{url}/sessions/{ghost}/history")
    rating = {"query_id": query_id, "rating": 1}
    return [
        ("GET history", client.get(f"{url}/sessions/{victim_session}/history"), unknown_read),
        (
            "POST /query",
            client.post(f"{url}/query", json={"query": note, "session_id": victim_session}),
            unknown_read,
        ),
        (
            "POST /feedback",
            client.post(f"{url}/feedback", json={"session_id": victim_session, **rating}),
            client.post(f"{url}/feedback", json={"session_id": ghost, **rating}),
        ),
    ]


def refused_as_unknown(victim: httpx.Response, unknown: httpx.Response, session: str) -> bool:
    """404, word for word what an id nobody has used answers."""
    return (
        victim.status_code == 404
        and unknown.status_code == 404
        and victim.text == unknown.text.replace(f"ghost-{session}", session)
    )


def test_two_people_on_two_processes_lose_nothing_and_never_cross(team: Team) -> None:
    tally, answered = Tally(), Answered()

    # Nobody unnamed gets in once people are configured.
    for url in team.urls:
        assert httpx.get(f"{url}/sessions").status_code == 401
        wrong = httpx.get(f"{url}/sessions", headers={"Authorization": "Bearer l2_not-a-token"})
        assert wrong.status_code == 401

    def converse(job: tuple[str, int]) -> None:
        """One person's session: turns alternately on each process; after each, the other
        person's session of the same number is read, continued and rated as this person."""
        person, index = job
        session, victim = session_of(person, index), session_of(other_of(person), index)
        with team.client(person) as client:
            for turn in range(TURNS):
                url = team.urls[(index + turn + PEOPLE.index(person)) % 2]
                question = f"[{session}] question {turn}"
                response = client.post(
                    f"{url}/query", json={"query": question, "session_id": session}
                )
                assert response.status_code == 200, response.text
                payload = response.json()
                assert payload["answer"] == f"answered: {question}", payload["answer"]
                answered.add(session, question, payload["query_id"])
                known = answered.first(victim)  # continue it only once its owner has
                if known is None:
                    read = client.get(f"{team.urls[1 - turn % 2]}/sessions/{victim}/history")
                    tally.probe(read.status_code == 404, f"{person} read {victim}: {read.text}")
                    continue
                for what, tried, unknown in intrusions(
                    client, team.urls[1 - turn % 2], victim, known[1], f"[{person}] intrudes"
                ):
                    tally.probe(
                        refused_as_unknown(tried, unknown, victim),
                        f"{person} {what} {victim}: {tried.status_code} {tried.text[:200]}",
                    )

    jobs = [(person, index) for person in PEOPLE for index in range(SESSIONS_EACH)]
    with ThreadPoolExecutor(len(jobs)) as pool:
        list(pool.map(converse, jobs))
    sessions = {p: {session_of(p, i) for i in range(SESSIONS_EACH)} for p in PEOPLE}

    # Two people start the same new session id at the same instant, on different processes.
    barrier = threading.Barrier(2 * RACES)
    raced: dict[tuple[str, str], int] = {}

    def race(job: tuple[str, int]) -> None:
        person, index = job
        session = f"race-{index}"
        url = team.urls[(index + PEOPLE.index(person)) % 2]
        with team.client(person) as client:
            barrier.wait(60)
            response = client.post(
                f"{url}/query",
                json={"query": f"[{person}] starts {session}", "session_id": session},
            )
        assert response.status_code in (200, 404), response.text
        raced[(person, session)] = response.status_code
        if response.status_code == 200:
            answered.add(session, f"[{person}] starts {session}", response.json()["query_id"])

    with ThreadPoolExecutor(2 * RACES) as pool:
        list(pool.map(race, [(p, i) for p in PEOPLE for i in range(RACES)]))
    for index in range(RACES):
        session = f"race-{index}"
        winners = [p for p in PEOPLE if raced[(p, session)] == 200]
        if len(winners) != 1:
            tally.crossed.append(f"{session} was started by {winners or 'nobody'}")
        for winner in winners:
            sessions[winner].add(session)

    # Every answered turn is in its owner's history, from either process, and nothing else.
    before: dict[str, dict[str, Any] | None] = {}
    for person in PEOPLE:
        with team.client(person) as client:
            for session in sorted(sessions[person]):
                before[session] = settled(client, team.urls[0], session)
                asked = [q for q, _ in answered.turns[session]]
                for url in team.urls:
                    shown = [
                        t["user"] for t in (history(client, url, session) or {}).get("turns", [])
                    ]
                    tally.lost += [f"{q} (from {url})" for q in asked if q not in shown]
                    tally.crossed += [f"{q} in {session}" for q in shown if q not in asked]

    # Each one's list shows their own sessions, all of them, on both processes.
    for person in PEOPLE:
        with team.client(person) as client:
            for url in team.urls:
                response = client.get(f"{url}/sessions", params={"limit": 1000})
                assert response.status_code == 200, response.text
                listed = {s["session_id"] for s in response.json()}
                tally.crossed += [f"{person} lists {s}" for s in listed - sessions[person]]
                tally.lost += [f"{person} misses {s}" for s in sessions[person] - listed]

    # Afterwards, each tries everything on every session of the other's, on both processes:
    # all refused as unknown, no model asked, and the other's sessions exactly as they were.
    asked_model = len(team.fake.chat_requests)
    for person in PEOPLE:
        with team.client(person) as client:
            for victim in sorted(sessions[other_of(person)]):
                query_id = answered.turns[victim][0][1]
                for url in team.urls:
                    for what, tried, unknown in intrusions(
                        client, url, victim, query_id, f"[{person}] intrudes later"
                    ):
                        tally.probe(
                            refused_as_unknown(tried, unknown, victim),
                            f"{person} {what} {victim}: {tried.status_code} {tried.text[:200]}",
                        )
    if len(team.fake.chat_requests) != asked_model:
        tally.crossed.append(f"{len(team.fake.chat_requests) - asked_model} refused turns ran")
    for person in PEOPLE:
        with team.client(person) as client:
            for session in sorted(sessions[person]):
                for url in team.urls:
                    if history(client, url, session) != before[session]:
                        tally.crossed.append(f"{session} changed by the other's attempts ({url})")

    print(f"\npeople on two processes: {tally.summary()}")
    assert tally.probes >= 2 * len(PEOPLE) * SESSIONS_EACH * len(team.urls) * 3
    assert (len(tally.crossed), len(tally.lost)) == (0, 0), tally.summary()
