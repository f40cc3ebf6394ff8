"""Time travel as a person uses it: ``local2 history`` and ``local2 replay`` in real processes,
then the same operations through the Python API."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from local2.errors import UnknownTurn
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2 as run_local2
from tests.kit.helpers import make_settings

FRANCE = "What is the capital of France?"
GIL = "Tell me about the Python GIL."
WHY = "Why was it introduced?"


def local2(
    args: list[str], env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``local2`` and require that it succeeded without a traceback."""
    done = run_local2(*args, env=env, stdin=stdin, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done


@pytest.mark.slow
def test_history_then_replay_with_a_new_question_keeps_the_original_branch(
    tmp_path: Path,
) -> None:
    with FakeOllama(RuleBrain(), models=["gemma4:12b", "gemma3:1b", "nomic-embed-text"]) as fake:
        # The three questions are piped in back to back: each waits for the last one's grade
        # (the old order), so that no grade is owed at the checkpoints replayed from (a
        # branch from one that owes a grade lands it: one more checkpoint on the branch).
        config = tmp_path / "config"
        config.mkdir()
        (config / "critic.yaml").write_text("yield_to_new_turns: false\n")
        env = {
            "OLLAMA_HOST": fake.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(config),
        }
        session = "three-turns"
        chat = local2(
            ["chat", "--session", session, "--backend", "ollama"], env, f"{FRANCE}\n{GIL}\n{WHY}\n"
        )
        assert "Paris" in chat.stdout and "introduced in the early 1990s" in chat.stdout

        listed = local2(["history", session, "--json", "--limit", "200"], env)
        rows = json.loads(listed.stdout)
        summaries = [r["summary"] for r in rows]
        for question in (FRANCE, GIL, WHY):
            assert f"Q: {question}" in summaries
        assert rows[0]["next"] == [] and rows[0]["summary"].startswith("A: The GIL was")
        assert sum(r["node"] == "critique,ingest" for r in rows) == 3  # three finished turns
        assert all(r["current"] for r in rows)
        steps = [r["step"] for r in rows]
        assert steps == sorted(steps, reverse=True)  # newest first
        table = local2(["history", session, "--limit", "5"], env).stdout
        assert rows[0]["checkpoint_id"] in table and "critique,ingest" in table

        # The checkpoint before the second answer: receive has run, generate is next.
        before_second = next(
            r for r in rows if r["next"] == ["generate"] and r["summary"] == f"Q: {GIL}"
        )
        replayed = json.loads(
            local2(
                [
                    "replay",
                    session,
                    "--checkpoint",
                    before_second["checkpoint_id"],
                    "--query",
                    FRANCE,
                    "--backend",
                    "ollama",
                    "--json",
                ],
                env,
            ).stdout
        )
        assert "Paris" in replayed["answer"] and replayed["query"] == FRANCE
        assert "Global Interpreter Lock" in replayed["original"]["answer"]
        assert replayed["original"]["query"] == GIL
        original_ids = {r["checkpoint_id"] for r in rows}
        assert replayed["branch"] and not set(replayed["branch"]) & original_ids

        after = json.loads(local2(["history", session, "--json", "--limit", "200"], env).stdout)
        by_id = {r["checkpoint_id"]: r for r in after}
        assert original_ids <= set(by_id), "the original branch must stay listed"
        assert not by_id[rows[0]["checkpoint_id"]]["current"]  # the old third answer
        assert all(by_id[c]["current"] for c in replayed["branch"])
        assert after[0]["checkpoint_id"] == replayed["branch"][0]

        # The text view shows both answers side by side, and another model can answer.
        shown = local2(
            [
                "replay",
                session,
                "--checkpoint",
                before_second["checkpoint_id"],
                "--model",
                "gemma3:1b",
                "--backend",
                "ollama",
            ],
            env,
        ).stdout
        assert "mutex" in shown and "gemma3:1b" in shown  # the answers; the new model
        model_row = next(line for line in shown.splitlines() if "gemma3:1b" in line)
        assert "gemma4:12b (ollama)" in model_row  # and, beside it, the original's
        assert "New branch checkpoints" in shown
        assert any(r["model"] == "gemma3:1b" for r in fake.chat_requests)
        # Resumed mid-turn (receive did not run again), the state still names the new model.
        history = json.loads(local2(["history", session, "--json"], env).stdout)
        latest = history[0]
        assert latest["next"] == [] and latest["current"]
        state = Agent(
            make_settings(
                tmp_path, system={"ollama_host": fake.url, "data_dir": str(tmp_path / "home")}
            ),
            backend="ollama",
            tools=[],
            memory=None,
            critic=None,
        ).sessions.state(session)
        assert state["model"] == "gemma3:1b"


def test_python_api_replay_and_fork(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as fake:
        settings = make_settings(
            tmp_path, system={"ollama_host": fake.url}, generator={"backend": "ollama"}
        )
        agent = Agent(settings, memory=None, critic=None)
        try:
            for question in (FRANCE, GIL):
                agent.turns.ask(question, "s")
            rows = agent.sessions.checkpoints("s", 100)
            end_of_first = next(r for r in rows if r["next"] == [] and "Paris" in r["summary"])

            # A turn's end has nothing left to run...
            with pytest.raises(UnknownTurn, match="ends a turn"):
                agent.timetravel.replay("s", end_of_first["checkpoint_id"])
            # ...but a new question forks from it: the GIL turn never happened there.
            forked = agent.timetravel.replay("s", end_of_first["checkpoint_id"], query=WHY)
            assert "What do you mean" in forked["answer"]
            assert forked["original"]["query"] == GIL
            assert [t["user"] for t in agent.sessions.history("s")] == [FRANCE, WHY]

            # Without a question, resuming from mid-turn re-runs the rest of that turn.
            mid = next(r for r in rows if r["next"] == ["generate"] and GIL in r["summary"])
            again = agent.timetravel.replay("s", mid["checkpoint_id"])
            assert "Global Interpreter Lock" in again["answer"] and again["query"] == GIL
            assert [t["user"] for t in agent.sessions.history("s")] == [FRANCE, GIL]

            everything = {r["checkpoint_id"] for r in agent.sessions.checkpoints("s", 500)}
            assert {r["checkpoint_id"] for r in rows} <= everything
            assert set(forked["branch"]) <= everything
            # The state at any listed checkpoint can still be read.
            assert agent.sessions.state("s", end_of_first["checkpoint_id"])["answer"].endswith(
                "Paris."
            )
            with pytest.raises(UnknownTurn):
                agent.timetravel.replay("s", "no-such-checkpoint")
        finally:
            agent.close()
