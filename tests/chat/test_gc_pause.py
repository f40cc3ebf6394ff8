"""The cyclic GC is paused while `local2` starts and runs again once a long command is set up.

Each check runs in its own interpreter: pausing or freezing the collector of the test
process would change every test after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from local2.ports import free_port
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from local2_testkit.processes import end_group
from tests.chat.helpers import lexical_config


def python(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_pause_then_resume_freezes_and_turns_the_collector_back_on() -> None:
    said = python(
        """
import gc, json
import local2.cli._gc_pause as gc_pause
seen = {"paused": gc_pause.pause(), "off": not gc.isenabled()}
seen["resumed"] = gc_pause.resume("test")
seen |= {"on": gc.isenabled(), "frozen": gc.get_freeze_count(), "by": gc_pause.state.resumed_by}
seen["again"] = gc_pause.resume("test")  # not paused any more: nothing to do
print(json.dumps(seen))
"""
    )
    seen = json.loads(said)
    assert seen["paused"] and seen["off"] and seen["resumed"] and seen["on"]
    assert seen["frozen"] > 1000 and seen["by"] == "test" and seen["again"] is False


def test_the_safety_net_resumes_a_pause_nobody_ended() -> None:
    said = python(
        """
import gc, json, time
import local2.cli._gc_pause as gc_pause
gc_pause.pause(safety_s=0.2)
deadline = time.monotonic() + 60
while not gc.isenabled() and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({"on": gc.isenabled(), "by": gc_pause.state.resumed_by}))
"""
    )
    assert json.loads(said) == {"on": True, "by": "safety net"}


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    said = python(
        """
import gc
import local2.cli._gc_pause as gc_pause
gc.disable()
print(gc_pause.pause(), gc_pause.resume("test"), gc.isenabled())
"""
    )
    assert said.split() == ["False", "False", "False"]


def test_the_program_pauses_it_and_an_import_does_not() -> None:
    ran = python(
        """
import gc, runpy, sys
sys.argv = ["local2", "--help"]
try:
    runpy.run_module("local2.cli", run_name="__main__")
except SystemExit:
    pass
print("enabled:", gc.isenabled())
"""
    )
    assert "enabled: False" in ran  # a short command may end with it paused
    imported = python("import gc, local2.cli; print('enabled:', gc.isenabled())")
    assert imported.strip() == "enabled: True"


# Runs the real `local2` command in this interpreter, with one thread watching from inside:
# once the server answers /health it writes what the collector is doing. The safety net is
# put out of reach first, so only the command itself can have turned the collector on.
WATCHED = """
import gc, json, os, runpy, sys, threading, time, urllib.request
import local2.cli._gc_pause as gc_pause

gc_pause.SAFETY_S = 3600.0
report, url = sys.argv[1], sys.argv[2]


def write_state():
    seen = {
        "enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
        "resumed_by": gc_pause.state.resumed_by,
    }
    with open(report + ".tmp", "w") as fh:
        json.dump(seen, fh)
    os.replace(report + ".tmp", report)  # whole, or not there


def watch():
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as answer:
                if answer.status == 200:
                    break
        except OSError:
            time.sleep(0.1)
    write_state()


if url != "-":
    threading.Thread(target=watch, daemon=True).start()
sys.argv = ["local2", *sys.argv[3:]]
try:
    runpy.run_module("local2.cli", run_name="__main__")
finally:
    if url == "-":
        write_state()
"""


def test_a_started_serve_process_collects_again_once_it_serves(tmp_path: Path) -> None:
    report, port = tmp_path / "gc.json", free_port()
    command = ["--config", str(lexical_config(tmp_path)), "serve", "--no-ui", "--backend", "ollama"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    log = tmp_path / "serve.log"
    with FakeOllama(RuleBrain()) as ollama, log.open("wb") as out:
        env = {**os.environ, "OLLAMA_HOST": ollama.url, "LOCAL2_HOME": str(tmp_path / "home")}
        process = subprocess.Popen(
            [sys.executable, "-c", WATCHED, str(report), f"http://127.0.0.1:{port}", *command],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 300  # a loaded machine imports slowly
            while not report.exists():
                assert process.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.1)
        finally:
            end_group(process)
    seen = json.loads(report.read_text())
    assert seen["enabled"] and seen["resumed_by"] == "serve" and seen["frozen"] > 1000


def test_ask_collects_again_before_its_turn(tmp_path: Path) -> None:
    report = tmp_path / "gc.json"
    with FakeOllama(RuleBrain()) as ollama:
        python(
            WATCHED,
            str(report),
            "-",
            *("--config", str(lexical_config(tmp_path)), "ask", "What is the capital of France?"),
            *("--backend", "ollama"),
            env={"OLLAMA_HOST": ollama.url, "LOCAL2_HOME": str(tmp_path / "home")},
        )
    seen = json.loads(report.read_text())
    assert seen["enabled"] and seen["resumed_by"] == "ask"
