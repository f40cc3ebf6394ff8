"""``local2 eval`` through the real command, in processes of its own.

- Kill and resume: a run answering through the Ollama-protocol server (the eval stand-in,
  each reply a moment slow) is SIGKILLed after a few questions are recorded; ``eval list``
  shows it interrupted; ``eval --resume`` finishes it. Every question ends with exactly one
  record, none is lost, and no question recorded before the kill is asked again.
- ``eval show``, ``eval list``, ``eval compare`` and what a mistake prints.
- The demo: ``local2 eval demo`` offline on the embedded model, on its first questions (the
  whole set's time on the embedded model is measured by hand: docs/evals.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from local2.evals import DEMO_PATH, load_set
from local2_testkit.eval_brain import ABSTAIN, EvalBrain
from local2_testkit.ollama_server import FakeOllama
from tests.kit.helpers import local2

QUESTIONS = load_set(DEMO_PATH).questions[:8]
DEMO_LIMIT = 5  # the demo's first questions, on the real embedded model


def answers() -> dict[str, str]:
    return {
        q.question: (f"It is {q.answers[0]}." if i % 3 else ABSTAIN)
        for i, q in enumerate(QUESTIONS)
    }


def runs_folder(home: Path) -> Path:
    return home / "evals"


def ctrl_c_as_at_a_terminal() -> None:
    """A shell's background job starts with Ctrl-C ignored and a child inherits that: the
    command under test gets Ctrl-C as it would at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_demo_run(env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    """``local2 eval demo`` on 8 questions answered by the Ollama-protocol server, as a
    process of its own (to be killed or interrupted)."""
    args = ["eval", "demo", "--limit", "8", "--backend", "ollama", "--model", "gemma4:12b"]
    return subprocess.Popen(
        [sys.executable, "-m", "local2.cli", *args, *extra],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )


def results_file(home: Path, process: subprocess.Popen[str]) -> Path:
    """The run's results file, once the run has made it (the process must still be running)."""
    deadline = time.monotonic() + 120
    while not list(runs_folder(home).glob("*/results.jsonl")):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    return next(runs_folder(home).glob("*/results.jsonl"))


def wait_for_lines(path: Path, count: int, process: subprocess.Popen[str], limit: float) -> None:
    """Until ``path`` has ``count`` whole lines (the process must still be running)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {count} lines")


def test_a_killed_run_resumes_without_asking_a_question_twice_or_losing_one(
    isolated_home: Path,
) -> None:
    brain = EvalBrain(answers())
    with FakeOllama(brain, delay_s=0.4) as fake:
        env = {"OLLAMA_HOST": fake.url}
        process = start_demo_run(env, "--concurrency", "2")
        try:
            results = results_file(isolated_home, process)
            wait_for_lines(results, 3, process, 120)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(30)
        assert process.returncode == -signal.SIGKILL
        run_id = results.parent.name
        before = [json.loads(line)["id"] for line in results.read_text().splitlines() if line]
        assert 3 <= len(before) < 8
        asked_before = Counter(brain.asked)

        listed = local2("eval", "list", "--json", env=env)
        assert listed.returncode == 0, listed.stderr
        assert [(r["run_id"], r["status"]) for r in json.loads(listed.stdout)] == [
            (run_id, "interrupted")
        ]

        resumed = local2("eval", "--resume", run_id, "--json", env=env, timeout=240)
        assert resumed.returncode == 0, resumed.stderr
        report = json.loads(resumed.stdout)
        assert report["status"] == "done" and report["summary"]["recorded"] == 8
        assert f"resuming run {run_id}" in resumed.stderr

    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert sorted(ids) == sorted(q.id for q in QUESTIONS)  # each once, none lost
    recorded_first = {q.question for q in QUESTIONS if q.id in before}
    for question in recorded_first:  # recorded before the kill: never asked again
        assert brain.asked[question] == asked_before[question] == 1
    assert report["summary"]["correct"] == 5 and report["summary"]["not_attempted"] == 3

    shown = local2("eval", "show", run_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "accuracy 62.5 % (95 % CI 30.6-86.3 %, 5 of 8)" in shown.stdout
    assert all(q.id in shown.stdout for q in QUESTIONS)
    csv_file = isolated_home / "out.csv"
    exported = local2("eval", "show", run_id, "--csv", str(csv_file), "--json", env=env)
    assert exported.returncode == 0 and len(csv_file.read_text().splitlines()) == 9
    compared = local2("eval", "compare", run_id, run_id, env=env)
    assert compared.returncode == 0, compared.stderr
    assert "No difference the test can see" in compared.stdout


def test_ctrl_c_stops_a_run_that_then_resumes(isolated_home: Path) -> None:
    brain = EvalBrain(answers())
    with FakeOllama(brain, delay_s=0.4) as fake:
        env = {"OLLAMA_HOST": fake.url}
        process = start_demo_run(env)
        try:
            results = results_file(isolated_home, process)
            wait_for_lines(results, 2, process, 120)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        run_id = results.parent.name
        assert f"Resume with: local2 eval --resume {run_id}" in stderr
        listed = json.loads(local2("eval", "list", "--json", env=env).stdout)
        assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "stopped")]
        resumed = local2("eval", "--resume", run_id, "--json", env=env, timeout=240)
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["summary"]["recorded"] == 8
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert sorted(ids) == sorted(q.id for q in QUESTIONS)


def test_mistakes_say_what_is_wrong(isolated_home: Path) -> None:
    missing = local2("eval", str(isolated_home / "nope.csv"), env={})
    assert missing.returncode == 2
    assert "no such file or folder" in missing.stderr
    unknown = local2("eval", "show", "eval-20200101-000000-abcdef", env={})
    assert unknown.returncode == 3
    assert "No eval run 'eval-20200101-000000-abcdef'." in unknown.stderr
    wrong = local2("eval", "demo", "--mode", "quiz", env={})
    assert wrong.returncode == 2 and "use ask or research" in wrong.stderr
    bare = local2("eval", env={})
    assert bare.returncode == 2 and "local2 eval SET" in bare.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_demo_runs_offline_on_the_embedded_model(isolated_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["eval", "demo", "--limit", str(DEMO_LIMIT), "--out", str(out), "--json"]
    done = local2(*args, env={}, timeout=500)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    manifest, summary = report["manifest"], report["summary"]
    assert report["status"] == "done" and summary["errors"] == 0
    assert summary["recorded"] == summary["graded"] == DEMO_LIMIT
    assert manifest["backend"] == "embedded" and manifest["grader"]["model"] == "match"
    assert manifest["settings"]["search_provider"] == "corpus" and manifest["settings"]["offline"]
    run_id = manifest["run_id"]
    assert (out / f"{run_id}.csv").exists()
    results = runs_folder(isolated_home) / run_id / "results.jsonl"
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert sorted(ids) == sorted(q.id for q in load_set(DEMO_PATH).questions[:DEMO_LIMIT])
