"""The ``local2`` command as a person runs it: a real process, a real Ollama-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

from local2_testkit.ollama_server import FakeModel, FakeOllama, RuleBrain, ScriptBrain
from tests.kit.helpers import local2, mock_search_config


def test_ask_json_then_follow_up_in_the_same_session(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
        first = local2(
            "ask", "What is the capital of France?", "--json", "--backend", "ollama", env=env
        )
        assert first.returncode == 0, first.stderr
        payload = json.loads(first.stdout)
        assert "Paris" in payload["answer"]
        assert payload["thinking"].strip()
        assert payload["tool_calls"] == []
        for subject in ("query.received", "response.generation", "answer.dialog"):
            assert subject in payload["events"]

        session = payload["session_id"]
        local2(
            "ask",
            "Tell me about the Python GIL.",
            "--session",
            session,
            "--backend",
            "ollama",
            env=env,
        )
        follow = local2(
            "ask",
            "Why was it introduced?",
            "--session",
            session,
            "--json",
            "--backend",
            "ollama",
            env=env,
        )
        assert follow.returncode == 0, follow.stderr
        answer = json.loads(follow.stdout)["answer"]
        assert "What do you mean" not in answer and "GIL" in answer

        history = local2("history", session, "--json", env=env)
        assert history.returncode == 0, history.stderr
        rows = json.loads(history.stdout)
        assert rows and rows[0]["next"] == []


def test_ask_with_nothing_listening_exits_non_zero_with_the_fix(tmp_path: Path) -> None:
    env = {"OLLAMA_HOST": "http://127.0.0.1:9", "LOCAL2_HOME": str(tmp_path / "home")}
    result = local2("ask", "hello", "--backend", "ollama", env=env)
    assert result.returncode != 0
    assert "ollama serve" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_bad_config_stops_start_up_naming_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "conf"
    config.mkdir()
    (config / "generator.yaml").write_text("num_ctx: lots\n")
    env = {"LOCAL2_CONFIG": str(config), "LOCAL2_HOME": str(tmp_path / "home")}
    result = local2("doctor", env=env)
    assert result.returncode != 0
    assert "generator.yaml" in result.stderr and "num_ctx" in result.stderr
    assert "Traceback" not in result.stderr


def test_chat_repl_streams_and_shows_tool_calls(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        env = {
            "OLLAMA_HOST": server.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(mock_search_config(tmp_path / "conf")),
        }
        result = local2(
            "chat",
            "--backend",
            "ollama",
            env=env,
            stdin="What major AI news broke this week?\n\n/exit\n",
        )
        assert result.returncode == 0, result.stderr
        assert "⚙ web_search" in result.stderr and "done" in result.stderr
        assert "mock provider: canned example results" in result.stderr  # said once, at start
        assert result.stderr.count("canned example results") == 1
        assert "question is empty" in result.stderr
        assert result.stdout.strip()


def test_doctor_json_reports_each_check_with_a_fix(tmp_path: Path) -> None:
    env = {"OLLAMA_HOST": "http://127.0.0.1:9", "LOCAL2_HOME": str(tmp_path / "home")}
    result = local2("doctor", "--json", "--backend", "ollama", env=env)
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert result.returncode == 1
    assert checks["ollama"]["status"] == "fail" and "ollama serve" in checks["ollama"]["fix"]
    assert checks["data directory"]["status"] == "ok"


def test_a_cleaned_answer_is_printed_again_and_said_to_be_the_recorded_one(tmp_path: Path) -> None:
    echo = json.loads(
        (Path(__file__).parents[1] / "fixtures" / "embedded_run" / "listing_echo.json").read_text()
    )  # the real SmolLM2 reply: an answer, then a copied recall listing
    with FakeOllama(ScriptBrain([echo["reply"]])) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
        result = local2("ask", "Who is Ines?", "--backend", "ollama", env=env)
    assert result.returncode == 0, result.stderr
    streamed, _, recorded = result.stdout.rpartition("The user's sister's name is Ines.")
    assert "(similarity 0.62" in streamed  # tokens are shown as they come...
    assert "similarity" not in recorded  # ...and the recorded answer is printed last,
    assert "The answer as recorded" in result.stderr  # and said to be the one kept


def test_a_reply_the_guard_replaces_is_held_back_for_a_model_without_native_tools(
    tmp_path: Path,
) -> None:
    """The same copied listing from a model that cannot call tools natively: nothing of it
    is printed and taken back; a "writing…" line, then the answer as kept."""
    echo = json.loads(
        (Path(__file__).parents[1] / "fixtures" / "embedded_run" / "listing_echo.json").read_text()
    )
    models = [FakeModel("gemma3:1b", ("completion",)), "nomic-embed-text"]
    with FakeOllama(ScriptBrain([echo["reply"]]), models=models) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
        result = local2(
            "ask", "Who is Ines?", "--backend", "ollama", "--model", "gemma3:1b", env=env
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("The user's sister's name is Ines.")
    assert "similarity" not in result.stdout + result.stderr
    assert "writing…" in result.stderr and "The answer as recorded" not in result.stderr
