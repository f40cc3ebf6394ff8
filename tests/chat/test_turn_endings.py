"""Turns that end early leave nothing behind: Stop, a dropped model stream, ``kill -9``.

Each against the real stack: ``ChatOllama`` streaming from the Ollama-protocol server over
HTTP, the SQLite checkpointer and turn log on disk; the kill and drop cases through the
``local2`` command in real processes. After each, the session's head is the last turn that
finished, the dead turn's checkpoints are listed as abandoned (never current), the next
turn continues from the head, and text shown before the failure is marked abandoned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.errors import SessionBusy, TurnCancelled
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, Reply, RuleBrain, ScriptBrain
from tests.kit.helpers import local2, make_settings

FRANCE = "What is the capital of France?"
LONG = " ".join(f"word{i}" for i in range(400))  # a long answer, streamed a word at a time


def wait_for(predicate: Any, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def cli_env(tmp_path: Path, url: str) -> dict[str, str]:
    """For ``local2`` runs: this server, no memory or critic (not under test, and slow to load)."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "memory.yaml").write_text("enabled: false\n")
    (config / "critic.yaml").write_text("enabled: false\n")
    return {
        "OLLAMA_HOST": url,
        "LOCAL2_HOME": str(tmp_path / "home"),
        "LOCAL2_CONFIG": str(config),
        "PYTHONUNBUFFERED": "1",
    }


def ollama_agent(tmp_path: Path, url: str) -> Agent:
    settings = make_settings(tmp_path, system={"ollama_host": url}, generator={"backend": "ollama"})
    return Agent(settings, backend="ollama", tools=[], memory=None, critic=None)


def assert_only_finished_turns_count(agent: Agent, session: str, finished: list[str]) -> None:
    """The head is the last finished turn; what the dead turn left is abandoned, not current."""
    rows = agent.sessions.checkpoints(session, 200)
    current = [r for r in rows if r["current"]]
    assert current[0]["next"] == [] and current[0]["summary"].startswith("A: ")
    dead = [r for r in rows if r["abandoned"]]
    assert dead, "the dead turn's checkpoints stay listed"
    assert not any(r["current"] for r in dead)
    assert [t["user"] for t in agent.sessions.history(session)] == finished
    assert agent.sessions.state(session)["query"] == finished[-1]


@pytest.fixture
def slow_second() -> Iterator[FakeOllama]:
    """First answer at once; the second streams a long answer slowly; the third at once."""
    brain = ScriptBrain(
        [
            Reply(content="Paris is the capital of France."),
            Reply(content=LONG, chunk_delay_s=0.05),
            Reply(content="Berlin is the capital of Germany."),
        ]
    )
    with FakeOllama(brain) as fake:
        yield fake


@pytest.fixture
def answered(tmp_path: Path, slow_second: FakeOllama) -> Iterator[Agent]:
    """An agent whose session "s" has one finished turn; its next answer streams slowly."""
    agent = ollama_agent(tmp_path, slow_second.url)
    agent.turns.ask(FRANCE, "s")
    yield agent
    agent.close()


def test_stop_mid_answer_records_nothing_and_closes_the_model_stream(
    answered: Agent, slow_second: FakeOllama
) -> None:
    agent = answered
    tokens: list[str] = []
    with pytest.raises(TurnCancelled):
        for kind, data in agent.turns.stream("Tell me a long story.", "s"):
            if kind == "token":
                tokens.append(data)
                if len(tokens) == 5:
                    stopped_at = time.monotonic()
                    assert agent.turns.is_running("s") and agent.turns.stop("s")
    assert time.monotonic() - stopped_at < 1.0  # the caller is released at once
    assert len(tokens) < 20
    # The HTTP stream to the model was closed: the server saw its client go away.
    wait_for(lambda: any("client went away" in e for e in slow_second.errors), what="close")
    assert slow_second.lines_sent < 100
    assert_only_finished_turns_count(agent, "s", [FRANCE])

    after = agent.turns.ask("And Germany?", "s")
    assert after["answer"] == "Berlin is the capital of Germany."
    # The new turn continues from the first turn's end, not from the stopped turn.
    assert [t["user"] for t in agent.sessions.history("s")] == [FRANCE, "And Germany?"]
    rows = {r["checkpoint_id"]: r for r in agent.sessions.checkpoints("s", 200)}
    walk, chain = next(iter(rows)), []
    while walk in rows:
        chain.append(rows[walk])
        walk = rows[walk]["parent_id"]
    assert not any(r["abandoned"] for r in chain)
    assert all(r["current"] for r in chain) and chain[-1]["summary"] == "new turn"
    assert not agent.turns.stop("s")  # nothing left to stop


def test_a_second_turn_of_a_busy_session_waits_or_is_refused(answered: Agent) -> None:
    agent = answered
    running = agent.turns.stream("Tell me a long story.", "s")
    next(running)
    with pytest.raises(SessionBusy):
        next(agent.turns.stream("Another question?", "s", wait=False))
    done = threading.Event()

    def stop_soon() -> None:
        time.sleep(0.3)
        agent.turns.stop("s")
        done.set()

    threading.Thread(target=stop_soon, daemon=True).start()
    with pytest.raises(TurnCancelled):
        for _ in running:
            pass
    assert done.is_set()
    # A waiting turn starts once the stopped one has wound down.
    assert agent.turns.ask("And Germany?", "s")["answer"].startswith("Berlin")


def test_a_stream_dropped_mid_answer_leaves_no_head_and_the_cli_marks_the_text(
    tmp_path: Path,
) -> None:
    with FakeOllama(RuleBrain(), words_per_chunk=1) as fake:
        env = cli_env(tmp_path, fake.url)
        first = local2("ask", FRANCE, "--session", "s", "--backend", "ollama", env=env)
        assert first.returncode == 0 and "Paris" in first.stdout

        # Ollama goes away after the thinking (12 words) and four words of the next answer.
        fake.drop_after_chunks = 16
        dropped = local2(
            "ask", "Tell me about the Python GIL.", "--session", "s", "--backend", "ollama", env=env
        )
        assert dropped.returncode == 1 and "Traceback" not in dropped.stderr
        assert "broke mid-answer" in dropped.stderr
        partial, mark = dropped.stdout.strip().splitlines()[-2:]
        assert partial.strip() == "The Python GIL (Global"  # the words that arrived
        assert mark == "[abandoned: the answer above was cut off and is not recorded]"

        rows = json.loads(local2("history", "s", "--json", "--limit", "100", env=env).stdout)
        dead = [r for r in rows if r["abandoned"]]
        assert {r["node"] for r in dead} >= {"input", "receive"}
        assert rows[0]["abandoned"] and not rows[0]["current"]  # newest, yet not the head
        head = next(r for r in rows if r["current"])
        assert head["next"] == [] and "Paris" in head["summary"]
        table = local2("history", "s", env=env)
        assert "✕" in table.stdout and "never finished" in table.stderr

        fake.drop_after_chunks = None
        again = local2(
            "ask",
            "What is the capital of France again?",
            "--session",
            "s",
            "--backend",
            "ollama",
            env=env,
        )
        assert again.returncode == 0, again.stderr
        prompt = fake.chat_requests[-1]["messages"]
        assert not any("Python GIL" in m["content"] for m in prompt)  # never in history
        rows = json.loads(local2("history", "s", "--json", "--limit", "100", env=env).stdout)
        assert rows[0]["current"] and rows[0]["next"] == []
        assert [r["checkpoint_id"] for r in rows if r["abandoned"]] == [
            r["checkpoint_id"] for r in dead
        ]


@pytest.mark.slow
def test_kill_9_mid_answer_leaves_no_head(tmp_path: Path) -> None:
    brain = ScriptBrain(
        [
            Reply(content="Paris is the capital of France."),
            Reply(content=LONG, chunk_delay_s=0.1),
            Reply(content="Berlin is the capital of Germany."),
        ]
    )
    with FakeOllama(brain) as fake:
        env = cli_env(tmp_path, fake.url)
        first = local2("ask", FRANCE, "--session", "k", "--backend", "ollama", env=env)
        assert first.returncode == 0
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local2.cli",
                "ask",
                "Tell me a long story.",
                "-s",
                "k",
                "--backend",
                "ollama",
            ],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            sent = fake.lines_sent
            wait_for(lambda: fake.lines_sent >= sent + 10, 120, "the answer to stream")
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        assert proc.returncode == -signal.SIGKILL

        rows = json.loads(local2("history", "k", "--json", "--limit", "100", env=env).stdout)
        assert rows[0]["abandoned"] and rows[0]["next"] == ["generate"]
        head = next(r for r in rows if r["current"])
        assert head["next"] == [] and "Paris" in head["summary"]

        after = local2("ask", "And Germany?", "-s", "k", "--backend", "ollama", "--json", env=env)
        assert after.returncode == 0, after.stderr
        assert json.loads(after.stdout)["answer"].startswith("Berlin")
        rows = json.loads(local2("history", "k", "--json", "--limit", "100", env=env).stdout)
        by_id = {r["checkpoint_id"]: r for r in rows}
        walk = rows[0]["checkpoint_id"]
        while walk in by_id:  # the new turn's lineage runs straight back to the first turn
            assert by_id[walk]["current"] and not by_id[walk]["abandoned"]
            walk = by_id[walk]["parent_id"]
        assert sum(r["abandoned"] for r in rows) >= 3


def test_chat_says_what_it_loads_and_marks_an_answer_cut_off(tmp_path: Path) -> None:
    brain = ScriptBrain(
        [
            Reply(content="Paris is the capital of France.", drop_after_chunks=3),
            Reply(content="Berlin is the capital of Germany."),
        ]
    )
    with FakeOllama(brain) as fake:
        env = cli_env(tmp_path, fake.url)
        done = local2(
            "chat", "-s", "c", "--backend", "ollama", env=env, stdin=f"{FRANCE}\nAnd Germany?\n"
        )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    loading = done.stderr.index("Loading the ollama model, memory and tools")
    assert loading < done.stderr.index("Ready in") < done.stderr.index("Session c.")
    assert "Paris is the \n[abandoned: the answer above was cut off and is not recorded]" in (
        done.stdout
    )
    assert "broke mid-answer" in done.stderr and "Berlin is the capital" in done.stdout
