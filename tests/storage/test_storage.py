"""Where conversations live: one turn-log contract over SQLite, Postgres and a LangGraph
store; the agent on Postgres (turns, history, replay, ratings, O(new content) per turn);
and the cross-process session lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.memory import InMemoryStore

from local2.config import load_settings
from local2.errors import SettingsError, StorageUnavailable
from local2.graph._turn import unrecorded_turn
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2.storage._bundles import SharedLocks
from local2.storage._open import open_storage
from local2.storage._store_turn_log import StoreTurnLog
from local2.storage._turn_log import SqliteTurnLog, TurnLog
from tests.kit.helpers import make_settings


def pg_settings(tmp_path: Path, url: str, **overrides: Any) -> Any:
    system = {"checkpointer": "postgres", "postgres_url": url, **overrides.pop("system", {})}
    return make_settings(tmp_path, system=system, **overrides)


def echo_history(messages: list[BaseMessage]) -> AIMessage:
    """Answers with every earlier question it was shown, so a test sees the history used."""
    asked = [str(m.content) for m in messages if m.type == "human"]
    return AIMessage(f"{asked[-1]} <- after [{', '.join(asked[:-1])}]")


def quiet_agent(settings: Any, replies: Any = None, **kwargs: Any) -> Agent:
    model = ScriptedChatModel(replies=replies or [echo_history], repeat_last=True)
    return Agent(settings, chat_model=model, tools=[], memory=None, critic=None, **kwargs)


# -- the turn-log contract -------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres", "store"])
def turn_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TurnLog]:
    if request.param == "sqlite":
        log: TurnLog = SqliteTurnLog(tmp_path / "turns.sqlite")
        yield log
    elif request.param == "store":
        store = InMemoryStore()
        yield StoreTurnLog(lambda: store)
        return
    else:
        url = request.getfixturevalue("postgres_url")
        storage = open_storage(pg_settings(tmp_path, url))
        yield storage.turn_log
        storage.close()
        return
    log.close()


def test_turn_log_contract(turn_log: TurnLog) -> None:
    assert turn_log.window(None, 10) == [] and turn_log.find("s", "q") is None
    head = None
    for i in range(5):
        head = turn_log.append(
            parent_id=head,
            session_id="s1",
            query_id=f"q{i}",
            user=f"Q{i}",
            assistant=f"A{i}",
            record={"n": i},
        )
    other = turn_log.append(
        parent_id=None, session_id="s2", query_id="x", user="elsewhere", assistant="B"
    )
    window = turn_log.window(head, 3)
    assert [t.user for t in window] == ["Q2", "Q3", "Q4"]
    assert [t.user for t in turn_log.window(head, 50)] == [f"Q{i}" for i in range(5)]
    assert turn_log.window(other, 50)[0].assistant == "B"
    # A fork after Q1 shares Q0, Q1 and leaves the original branch intact.
    q1 = turn_log.find("s1", "q1")
    assert q1 is not None and q1.record == {"n": 1} and q1.user == "Q1"
    fork = turn_log.append(
        parent_id=q1.id, session_id="s1", query_id="q2", user="Q2'", assistant="A2'"
    )
    assert [t.user for t in turn_log.window(fork, 50)] == ["Q0", "Q1", "Q2'"]
    assert [t.user for t in turn_log.window(head, 50)][-1] == "Q4"
    assert turn_log.find("s1", "q2").user == "Q2'"  # the latest answer to that question
    assert turn_log.window(head, 1)[0].record is None  # prompts do not read records
    assert turn_log.window(head, 2, records=True)[0].record == {"n": 3}
    turn_log.note(head, "rating", {"rating": 2})
    turn_log.note(head, "rating", {"rating": 5})  # the newest of a kind counts
    turn_log.note(q1.id, "grade", 4)
    assert turn_log.notes([head, q1.id, fork]) == {
        head: {"rating": {"rating": 5}},
        q1.id: {"grade": 4},
    }
    sessions = {s["session_id"]: s for s in turn_log.sessions()}
    assert sessions["s1"]["turns"] == 6 and sessions["s1"]["first"] == "Q0"
    assert sessions["s2"]["turns"] == 1


def test_a_prompt_window_after_a_turn_written_here_needs_no_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn's prompt reads the history window ending at the last turn: once a window
    has been read, the turns written after it extend it without a query, and a process that
    did not write them (a fresh log on the same file) reads the same window."""
    path = tmp_path / "turns.sqlite"
    here, elsewhere = SqliteTurnLog(path), SqliteTurnLog(path)
    head = here.append(parent_id=None, session_id="s", query_id="q0", user="Q0", assistant="A0")
    assert [t.user for t in here.window(head, 3)] == ["Q0"]  # read once
    queries: list[str] = []
    fetch = SqliteTurnLog._fetch

    def counted(self: SqliteTurnLog, sql: str, params: Any) -> Any:
        queries.append(sql)
        return fetch(self, sql, params)

    monkeypatch.setattr(SqliteTurnLog, "_fetch", counted)
    for i in range(1, 5):
        head = here.append(
            parent_id=head,
            session_id="s",
            query_id=f"q{i}",
            user=f"Q{i}",
            assistant=f"A{i}",
            record={"n": i},
        )
        assert [t.user for t in here.window(head, 3)] == [
            f"Q{n}" for n in range(max(0, i - 2), i + 1)
        ]
    assert queries == []
    assert here.window(head, 3) == elsewhere.window(head, 3)  # the other one asked the file
    assert len(queries) == 1 and all(t.record is None for t in here.window(head, 3))
    # A turn another process wrote is read from the file, and then extended here too.
    theirs = elsewhere.append(
        parent_id=head, session_id="s", query_id="q5", user="Q5", assistant="A5"
    )
    assert [t.user for t in here.window(theirs, 3)] == ["Q3", "Q4", "Q5"]
    mine = here.append(parent_id=theirs, session_id="s", query_id="q6", user="Q6", assistant="A6")
    assert [t.user for t in here.window(mine, 3)] == ["Q4", "Q5", "Q6"]
    assert len(queries) == 2  # theirs read once from the file; mine extended theirs
    here.close()
    elsewhere.close()


# -- configuration ---------------------------------------------------------------------------


def test_postgres_needs_a_url_and_reads_it_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SettingsError, match="LOCAL2_POSTGRES_URL"):
        make_settings(tmp_path, system={"checkpointer": "postgres"})
    monkeypatch.setenv("LOCAL2_POSTGRES_URL", "postgresql://team@db:5432/local2")
    settings = load_settings(overrides={"system": {"checkpointer": "postgres"}})
    assert settings.system.postgres_url == "postgresql://team@db:5432/local2"


def test_team_libraries_are_imported_only_when_configured() -> None:
    """psycopg, the OpenAI client and Chroma cost start-up time every command would pay."""
    import subprocess
    import sys

    code = (
        "import sys, local2.cli, local2.service.agent, local2.http._app\n"
        "import local2.storage._open, local2.service.doctor\n"
        "import local2.service.research._research\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'psycopg', 'psycopg_pool', 'langchain_openai', 'openai', 'chromadb'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_unreachable_postgres_is_one_clear_error_without_the_password(tmp_path: Path) -> None:
    from local2.ports import free_port

    url = f"postgresql://team:hunter2@127.0.0.1:{free_port()}/local2"
    with pytest.raises(StorageUnavailable) as caught:
        quiet_agent(pg_settings(tmp_path, url))
    text = f"{caught.value.message} {caught.value.fix}"
    assert f"127.0.0.1:{url.split(':')[3].split('/')[0]}/local2" in text
    assert "LOCAL2_POSTGRES_URL" in text and "hunter2" not in text


def test_doctor_checks_the_database(tmp_path: Path, postgres_url: str) -> None:
    from local2.ports import free_port
    from local2.service.doctor import run_checks

    ok = {c.name: c for c in run_checks(pg_settings(tmp_path, postgres_url))}["postgres"]
    assert ok.status == "ok" and "(server " in ok.detail
    down = f"postgresql://team:hunter2@127.0.0.1:{free_port()}/local2"
    bad = {c.name: c for c in run_checks(pg_settings(tmp_path, down))}["postgres"]
    assert bad.status == "fail" and "hunter2" not in bad.detail
    assert "LOCAL2_POSTGRES_URL" in bad.fix


# -- the agent on Postgres -------------------------------------------------------------------


def test_agent_on_postgres_keeps_turns_history_replay_and_ratings(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = pg_settings(tmp_path, postgres_url)
    agent = quiet_agent(settings)
    payloads = [agent.turns.ask(f"question {i}", "team-1") for i in range(3)]
    assert payloads[2]["answer"] == "question 2 <- after [question 0, question 1]"
    agent.close()

    again = quiet_agent(settings)  # a new process: everything comes from the database
    assert [t["user"] for t in again.sessions.history("team-1")] == [
        f"question {i}" for i in range(3)
    ]
    rows = again.sessions.checkpoints("team-1", 100)
    assert rows[0]["current"] and rows[0]["node"] == "critique,ingest"
    start_of_2 = next(
        r for r in rows if r["next"] == ["generate"] and r["query_id"] == payloads[2]["query_id"]
    )
    replayed = again.timetravel.replay(
        "team-1", start_of_2["checkpoint_id"], query="question two, again"
    )
    assert replayed["answer"] == "question two, again <- after [question 0, question 1]"
    assert replayed["original"]["query"] == "question 2"
    assert [t["user"] for t in again.sessions.history("team-1")][-1] == "question two, again"
    rated = again.ratings.feedback("team-1", replayed["query_id"], 5)
    assert rated["rating"] == 5
    assert again.sessions.history("team-1")[-1]["reward"]["rating"] == 5
    assert {s["session_id"] for s in again.sessions.recent()} == {"team-1"}
    again.close()


def stored_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        ]
        return sum(
            conn.execute(f"SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM {t} t").fetchone()[0]
            for t in tables
        )


def test_postgres_storage_per_turn_stays_flat(tmp_path: Path, postgres_url: str) -> None:
    answer = "An answer of about a kilobyte. " * 32
    agent = quiet_agent(pg_settings(tmp_path, postgres_url), replies=[AIMessage(answer)])
    grown = []
    before = stored_bytes(postgres_url)
    for i in range(30):
        agent.turns.ask(f"Question number {i}?", "long")
        after = stored_bytes(postgres_url)
        grown.append(after - before)
        before = after
    agent.close()
    early, late = sorted(grown[2:7])[2], sorted(grown[-5:])[2]
    assert late <= 1.3 * early, grown  # O(new content): turn 30 writes what turn 5 wrote


# -- one turn per session across processes ---------------------------------------------------


def slow_echo(messages: list[BaseMessage]) -> AIMessage:
    time.sleep(0.6)
    return echo_history(messages)


def race_two_processes(tmp_path: Path, url: str, locks: list[SharedLocks | None]) -> list[str]:
    """Two agents on one database (as two processes would be), one turn each, same session,
    at the same moment; returns the session's history afterwards."""
    settings = pg_settings(tmp_path, url)
    agents = [quiet_agent(settings, [slow_echo], session_locks=lock) for lock in locks]
    agents[0].turns.ask("first", "shared")
    barrier = threading.Barrier(2)

    def turn(agent: Agent, question: str) -> None:
        barrier.wait()
        agent.turns.ask(question, "shared")

    threads = [
        threading.Thread(target=turn, args=(a, q))
        for a, q in zip(agents, ("from A", "from B"), strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    history = [t["user"] for t in agents[0].sessions.history("shared")]
    for agent in agents:
        agent.close()
    return history


def test_advisory_lock_serialises_a_session_across_processes(
    tmp_path: Path, postgres_url: str
) -> None:
    history = race_two_processes(tmp_path, postgres_url, [None, None])  # each opens its own
    assert history[0] == "first" and sorted(history[1:]) == ["from A", "from B"]


def test_without_the_lock_the_checkpointer_alone_loses_a_turn(
    tmp_path: Path, postgres_url: str
) -> None:
    """Why the lock exists: LangGraph's checkpointer lets two runs of one thread start from
    the same checkpoint, and the one that finishes last hides the other's answer."""
    history = race_two_processes(tmp_path, postgres_url, [SharedLocks(), SharedLocks()])
    assert history[0] == "first" and len(history) == 2


def test_a_turn_published_but_not_checkpointed_is_adopted(tmp_path: Path) -> None:
    log = SqliteTurnLog()
    agent = quiet_agent(make_settings(tmp_path, system={"checkpointer": "memory"}), turn_log=log)
    services = agent.services
    first = log.append(parent_id=None, session_id="s", query_id="q1", user="a", assistant="b")
    # The process died after publish wrote the log and before the checkpoint named the head:
    state = {"session_id": "s", "query_id": "q2", "history_head": first, "turn_count": 1}
    assert unrecorded_turn(state, services) == {}  # q2 never answered: nothing to adopt
    second = log.append(parent_id=first, session_id="s", query_id="q2", user="c", assistant="d")
    assert unrecorded_turn(state, services) == {"history_head": second, "turn_count": 2}
    done = {**state, "history_head": second, "turn_count": 2}
    assert unrecorded_turn(done, services) == {}  # checkpointed normally
    agent.close()


def test_processes_starting_together_set_up_the_database_once(postgres_url: str) -> None:
    """Two processes open a fresh database while a third holds the setup lock; when it lets
    go, one sets up (LangGraph builds its indexes CONCURRENTLY, which waits for every running
    statement) while the other waits for its turn without a statement of its own running."""
    from local2.storage._postgres import SETUP_KEY, UNLOCK_SQL, open_postgres

    holder = psycopg.connect(postgres_url, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (SETUP_KEY,))
    opened: list[Any] = []
    threads = [
        threading.Thread(target=lambda: opened.append(open_postgres(postgres_url, 2)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    time.sleep(1.0)
    holder.execute(UNLOCK_SQL, (SETUP_KEY,))
    for t in threads:
        t.join(60)
    holder.close()
    assert len(opened) == 2, "a process starting beside another never finished its setup"
    for storage in opened:
        storage.close()
