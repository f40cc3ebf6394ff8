"""The person first on a team server: two real ``local2 serve`` processes over one Postgres.

A session's turn running in one process holds the session's advisory lock until its critic
and memory are done. A next question sent to the *other* process must not wait behind that
grading: it announces itself (``NOTIFY``), the first process's critic gives way (its request
closed), and the owed grade is given later, once, by one of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.serve_process import serve_processes
from tests.people.helpers import (
    FRANCE,
    GIL,
    HELLO,
    SlowJudge,
    all_graded,
    asked_to_grade,
    graded,
    grades,
    wait_for,
)


def write_config(directory: Path, ollama_url: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "system.yaml").write_text(f"checkpointer: postgres\nollama_host: {ollama_url}\n")
    (directory / "generator.yaml").write_text("backend: ollama\nmodel: qwen3:4b\n")
    (directory / "memory.yaml").write_text('embedder: lexical\nfacts: "off"\n')
    (directory / "web.yaml").write_text("search:\n  provider: mock\n")
    return directory


@dataclass
class Pair:
    fake: FakeOllama
    judge: SlowJudge
    urls: list[str]
    postgres_url: str


@pytest.fixture
def pair(tmp_path: Path, postgres_url: str) -> Iterator[Pair]:
    judge = SlowJudge()
    with FakeOllama(judge) as fake:
        config = write_config(tmp_path / "conf", fake.url)
        env = {"LOCAL2_POSTGRES_URL": postgres_url, "LOCAL2_CONFIG": str(config)}
        with serve_processes(config, env, [tmp_path / "a", tmp_path / "b"]) as servers:
            yield Pair(fake, judge, [server.url for server in servers], postgres_url)


def noted_grades(postgres_url: str) -> dict[str, int]:
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            'SELECT t."user", COUNT(*) FROM local2_turn_notes n '
            "JOIN local2_turns t ON t.id = n.turn_id WHERE n.kind = 'critique' "
            'GROUP BY t."user"'
        ).fetchall()
    return {user: count for user, count in rows}


def test_a_question_to_another_process_makes_the_first_ones_critic_give_way(pair: Pair) -> None:
    fake = pair.fake
    a, b = (httpx.Client(base_url=url, timeout=180) for url in pair.urls)
    with a, b:
        first = a.post("/query", json={"query": FRANCE, "session_id": "team"})
        assert first.status_code == 200, first.text
        wait_for(lambda: asked_to_grade(fake, FRANCE), "process A's critic to ask the judge")
        second = b.post("/query", json={"query": GIL, "session_id": "team"})
        assert second.status_code == 200 and "GIL" in second.json()["answer"]
        # Process B's turn did not wait for A's grade: A's request was closed, ungraded.
        assert graded(fake, FRANCE, closed=True) and not graded(fake, FRANCE, closed=False)
        assert not grades(b, "team")[FRANCE]
        # Both grades come, once; either process shows them.
        shown = wait_for(lambda: all_graded(a, "team", [FRANCE, GIL]), "both grades", 180)
        assert shown[FRANCE]["score"] == 4 and grades(b, "team")[FRANCE]["score"] == 4
        assert len(graded(fake, FRANCE, closed=False)) == 1  # one judge for the owed grade
        # The session goes on from either process, from the head the grade landed on.
        third = a.post("/query", json={"query": HELLO, "session_id": "team"})
        assert third.status_code == 200
        wait_for(lambda: all_graded(b, "team", [FRANCE, GIL, HELLO]), "the third grade", 180)
        turns = b.get("/sessions/team/history").json()["turns"]
    assert [t["user"] for t in turns] == [FRANCE, GIL, HELLO]
    assert noted_grades(pair.postgres_url) == {FRANCE: 1, GIL: 1, HELLO: 1}
