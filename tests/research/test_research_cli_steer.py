"""``local2 research`` steered as a person steers it: a real process, the Ollama-protocol
server and the loopback web. ``--review`` at a terminal (a pseudo-terminal here) shows the
plan and takes edits; ``--plan FILE`` runs a plan with no terminal at all; a review nobody
answers leaves the run paused, and ``--resume RUN_ID --plan FILE`` answers it later;
``research followup RUN_ID "..."`` answers from the run's sources."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.helpers import local2
from tests.research.helpers import (
    BRIDGE,
    CORPUS,
    MILL,
    OTTERS,
    QUESTION,
    branches,
    environment,
    plan_requests,
)


@pytest.fixture
def web() -> Iterator[LoopbackWeb]:
    with LoopbackWeb(load_pages(CORPUS)) as served:
        yield served


def review_at_a_terminal(
    fake: FakeOllama, env: dict[str, str], lines: list[str], rounds: int
) -> tuple[int, str, str]:
    """``local2 research --review --json`` at a pseudo-terminal, ``lines`` typed once the
    plan is asked for: its exit code, stdout and stderr."""
    main, terminal = pty.openpty()
    command = [sys.executable, "-m", "local2.cli", "research", QUESTION, "--review"]
    command += ["--clarify", "never", "--max-rounds", str(rounds), "--backend", "ollama"]
    process = subprocess.Popen(
        [*command, "--json"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        text=True,
    )
    os.close(terminal)
    try:
        deadline = time.monotonic() + 120
        while not plan_requests(fake):  # typed ahead: read once the plan is shown
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        for line in lines:
            os.write(main, f"{line}\n".encode())
        out, err = process.communicate(timeout=180)
    finally:
        os.close(main)
    return process.returncode, out, err


def test_review_at_a_terminal_takes_edits_then_runs_them(web: LoopbackWeb, tmp_path: Path) -> None:
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        env = environment(web, tmp_path, fake.url)
        code, out, err = review_at_a_terminal(
            fake, env, ["drop q2", f"add {MILL}", "move 2 1", ""], rounds=1
        )
    assert code == 0, err
    assert "q1: Kelsby harbour bridge" in err and "s1 web_search" in err  # the plan shown
    assert "dropped q2" in err and f"added: {MILL}" in err
    payload = json.loads(out)
    assert payload["status"] == "done"
    assert sorted(web.searches()) == sorted([MILL, BRIDGE])  # q2 dropped: never searched
    queries = [s["args"].get("query") for s in payload["steps"] if s["tool"] == "web_search"]
    assert queries == [MILL, BRIDGE]  # in the order the person left them


def test_a_plan_file_runs_with_no_terminal_and_no_planner(web: LoopbackWeb, tmp_path: Path) -> None:
    plan = tmp_path / "plan.txt"
    plan.write_text(f"# my plan\n{BRIDGE}\n- {MILL}\n")
    with FakeOllama(ResearchBrain()) as fake:
        env = environment(web, tmp_path, fake.url)
        result = local2(
            "research",
            QUESTION,
            "--plan",
            str(plan),
            "--max-rounds",
            "1",
            "--backend",
            "ollama",
            "--json",
            env=env,
            stdin="",
        )
        asked = plan_requests(fake)
    assert result.returncode == 0, result.stderr
    assert asked == []  # the person's plan was run as given
    assert sorted(web.searches()) == sorted([BRIDGE, MILL])
    payload = json.loads(result.stdout)
    assert [p["origin"] for p in payload["plan"]] == ["person"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"subquestions": []}')
    refused = local2("research", QUESTION, "--plan", str(broken), env=env, stdin="")
    assert refused.returncode != 0 and "no sub-question is left" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_an_unanswered_review_stays_paused_then_a_plan_file_answers_it_and_a_follow_up(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        env = environment(web, tmp_path, fake.url)
        base = ["--max-rounds", "1", "--backend", "ollama"]
        paused = local2("research", QUESTION, "--review", *base, "--json", env=env, stdin="")
        assert paused.returncode == 0, paused.stderr
        shown = json.loads(paused.stdout)
        run_id = shown["run_id"]
        assert "The run waits for you" in paused.stderr
        assert f"local2 research --resume {run_id}" in paused.stderr and web.hits == []
        listed = local2("research", "list", "--json", env=env)
        assert json.loads(listed.stdout)[0]["status"] == "awaiting_input"

        # The plan as shown ({goal, steps}, each step with the fields the server adds),
        # sent back edited: the bridge's steps dropped, the otters' search reworded.
        steps = [s for s in shown["awaiting"]["steps"] if s["branch"] != "q1"]
        assert {"branch", "status"} <= set(steps[0])
        search = next(s for s in steps if s["tool"] == "web_search")
        search["args"] = {**search["args"], "query": "Lune otters survey"}
        last = steps[-1]
        last["requires"] = [r for r in last["requires"] if any(s["id"] == r for s in steps)]
        answer = tmp_path / "plan.json"
        answer.write_text(json.dumps({"goal": "Otters (edited)", "steps": steps}))
        resumed = local2(
            "research",
            "--resume",
            run_id,
            "--plan",
            str(answer),
            *base,
            "--json",
            env=env,
            stdin="",
        )
        assert resumed.returncode == 0, resumed.stderr
        done = json.loads(resumed.stdout)
        assert done["status"] == "done" and web.searches() == ["Lune otters survey"]  # as edited
        assert done["goal"] == "Otters (edited)"
        assert [p["origin"] for p in done["plan"]] == ["model", "person"]

        hits = len(web.hits)
        followup = local2(
            "research",
            "followup",
            run_id,
            "How many otters did the Lune survey find?",
            "--json",
            env=env,
        )
        assert followup.returncode == 0, followup.stderr
        record = json.loads(followup.stdout)
        assert record["from_ledger"] and len(web.hits) == hits
        assert "Follow-up 1:" in followup.stderr and record["answer"].startswith(
            "# How many otters"
        )
        missing = local2("research", "followup", "nope", "Why?", env=env)
        assert missing.returncode != 0 and "No research run 'nope'" in missing.stderr


def test_stop_at_the_review_prompt_ends_the_run_and_resume_finds_it_stopped(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """``stop`` typed at the plan prompt ends the run as a running run's Stop does: its
    report says nothing was read, its status says stopped, and ``--resume`` runs nothing."""
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        env = environment(web, tmp_path, fake.url)
        code, out, err = review_at_a_terminal(fake, env, ["stop"], rounds=2)
        assert code == 0, err
        payload = json.loads(out)
        again = local2("research", "--resume", payload["run_id"], "--json", env=env, stdin="")
    assert "stop (end the run" in err and "You: stopped the run" in err
    assert payload["status"] == "stopped" and payload["stopped"] == "the person stopped the run"
    assert "stopped the run before anything was searched or read" in payload["report"]
    assert again.returncode == 0, again.stderr
    assert f"run {payload['run_id']} stopped (the person stopped the run) already" in again.stderr
    assert json.loads(again.stdout)["report"] == payload["report"]
    assert web.hits == [] and len(plan_requests(fake)) == 1
