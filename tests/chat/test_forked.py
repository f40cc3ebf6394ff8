"""The tests' warm ``local2`` (local2_testkit.forked) is the process a cold start would be:
its own pid, the environment, directory, stdin and exit it was given, Python's shutdown at
its end; and the commands answer as cold ones do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local2_testkit.forked import ForkServer
from local2_testkit.processes import end_group
from tests.kit.helpers import local2

PROBE = """\
import atexit, json, os, sys, threading, time

def at_exit():
    print("atexit ran", flush=True)

atexit.register(at_exit)
line = sys.stdin.read()
if sys.argv[1:] == ["hang"]:
    time.sleep(60)
done = []
worker = threading.Thread(target=lambda: (time.sleep(0.3), done.append(1)))
worker.start()  # not a daemon: the shutdown waits for it
warm = "local2.cli._main" in sys.modules
print(json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "probe": os.environ.get("PROBE"),
                  "stdin": line, "args": sys.argv[1:], "modules": warm}))
sys.stderr.write("to stderr\\r\\n")
threading.Thread(target=lambda: (worker.join(), print("worker", done, flush=True))).start()
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    started = ForkServer()
    yield started
    started.close()


def test_each_child_is_its_own_process_with_what_it_was_given(
    server: ForkServer, tmp_path: Path
) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    env = {**os.environ, "PROBE": "yes", "PROBE_EXIT": "7"}
    first = server.run(["a", "b"], env, "hello\n", tmp_path, 30, module="probe")
    second = server.run([], {**env, "PROBE": "no"}, None, tmp_path, 30, module="probe")
    shown, other = (json.loads(done.stdout.splitlines()[0]) for done in (first, second))
    assert shown["pid"] != os.getpid() and shown["pid"] != other["pid"]
    assert shown["cwd"] == str(tmp_path) and shown["probe"] == "yes" and shown["stdin"] == "hello\n"
    assert shown["args"] == ["a", "b"] and shown["modules"]  # the warm modules are there
    assert other["probe"] == "no"
    assert first.returncode == 7 and first.stderr == "to stderr\n"  # text=True's newlines
    assert "worker [1]" in first.stdout and first.stdout.rstrip().endswith("atexit ran")


def test_a_child_past_its_timeout_is_killed_and_raises(server: ForkServer, tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(["hang"], dict(os.environ), None, tmp_path, 2, module="probe")
    again = server.run([], dict(os.environ), None, tmp_path, 30, module="probe")
    assert again.returncode == 0  # the server goes on


def test_a_started_child_is_its_own_group_polled_and_ended_as_a_popen_is(
    server: ForkServer, tmp_path: Path
) -> None:
    """What ``local2 serve`` runs as (ServeProcess): a process group of its own, stdout and
    stderr to a file, polled while it runs and ended by its group."""
    (tmp_path / "probe.py").write_text(PROBE)
    stdin = os.open(os.devnull, os.O_RDONLY)
    with (tmp_path / "log").open("wb") as log:
        fds = (stdin, log.fileno(), log.fileno())
        process = server.start(["hang"], dict(os.environ), fds, tmp_path, "probe", True)
    os.close(stdin)
    assert process.poll() is None and os.getpgid(process.pid) == process.pid
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(0.2)
    end_group(process, grace_s=10)
    assert process.returncode == -signal.SIGTERM and process.poll() == -signal.SIGTERM


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["history", "never-was"], {}),
        (["sessions", "--json"], {}),
        (["nonsense-command"], {}),
        (["--help"], {"COLUMNS": "132"}),  # a console made at import reads this one's size
    ],
    ids=["unknown session", "an empty list", "a bad command", "help at 132 columns"],
)
def test_a_warm_command_answers_as_a_cold_one(args: list[str], env: dict[str, str]) -> None:
    warm = local2(*args, env=env)
    cold = local2(*args, env=env, cold=True)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
    assert warm.stderr == cold.stderr


def test_what_only_an_interpreters_start_reads_gets_a_cold_start() -> None:
    done = local2("--help", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0 and "import time:" in done.stderr


def test_the_server_ends_with_the_test_process_that_started_it(tmp_path: Path) -> None:
    """A test process killed outright leaves no warm server behind."""
    script = (
        "import os, sys, time\n"
        "from local2_testkit.forked import warm_server\n"
        "print(warm_server().process.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    server_pid = int(holder.stdout.readline())
    holder.kill()
    holder.wait(10)
    holder.stdout.close()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{server_pid}").exists() and "Z" not in state_of(server_pid):
        assert time.monotonic() < deadline, "the server outlived the process that started it"
        time.sleep(0.05)


def state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def test_the_server_refuses_to_fork_after_a_thread_started(tmp_path: Path) -> None:
    (tmp_path / "spawns.py").write_text(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from local2_testkit import fork_server; fork_server.preload(('spawns',))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != 0 and "importing spawns started a thread" in done.stderr
