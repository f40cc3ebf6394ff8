"""Several processes, each with its own APScheduler, on one real Postgres (Debian's package):
each due time runs once; ``kill -9`` of the process running a watch loses nothing and does
not double the next due time; a restart after missed due times makes one catch-up run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from local2.storage._watch_postgres import open_postgres_watches
from local2.watch import new_watch
from tests.kit.watch_worker import RAN_TABLE

ROOT = Path(__file__).resolve().parents[2]


class Workers:
    """The worker processes of one test, stopped (or killed) at its end."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, name: str, *extra: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.kit.watch_worker", self.url, name, *extra],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        self.procs[name] = proc
        return proc

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        for proc in self.procs.values():
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def workers(postgres_url: str) -> Iterator[Workers]:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(RAN_TABLE)
    open_postgres_watches(postgres_url).close()  # the tables, before processes race for them
    started = Workers(postgres_url)
    yield started
    started.close()


def add_watch(url: str, every: str, start: float) -> dict[str, Any]:
    store = open_postgres_watches(url)
    row = new_watch("alice", "What changed?", every, "Europe/Berlin", now=start)
    store.add(row)
    store.close()
    return dict(row)


def ran(url: str, phase: str = "end") -> list[tuple[float, str, int]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT due, claimer, attempt FROM test_ran WHERE phase=%s ORDER BY due, at", (phase,)
        ).fetchall()
    return [(float(d), str(c), int(a)) for d, c, a in rows]


def wait_for(check: Any, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_three_processes_run_each_of_twenty_due_times_once(workers: Workers) -> None:
    for name in ("p1", "p2", "p3"):
        workers.start(name)
    start = float(int(time.time()) + 1)
    watch = add_watch(workers.url, "every 1 second", start)
    expected = [start + k for k in range(1, 21)]
    wait_for(lambda: len({d for d, _, _ in ran(workers.url)} & set(expected)) == 20)
    for name in ("p1", "p2", "p3"):
        workers.stop(name)
    ends = [(d, c) for d, c, _ in ran(workers.url) if d in expected]
    starts = [d for d, _, _ in ran(workers.url, "start") if d in expected]
    assert sorted(d for d, _ in ends) == expected  # each due time once, none missed
    assert sorted(starts) == expected  # and started once
    print("runs per process:", Counter(c for _, c in ends))
    store = open_postgres_watches(workers.url)
    runs = [r for r in store.runs(watch["watch_id"], limit=100) if r["due"] in expected]
    store.close()
    assert sorted(r["due"] for r in runs) == expected
    assert {(r["status"], r["attempts"]) for r in runs} == {("done", 1)}


def test_kill_9_of_the_process_running_a_watch_loses_nothing_and_doubles_nothing(
    workers: Workers,
) -> None:
    workers.start("doomed", "--hang-first", "--lease", "1.5")
    start = float(int(time.time()) + 1)
    watch = add_watch(workers.url, "every 2 seconds", start)
    wait_for(lambda: ran(workers.url, "start"))
    [(hung_due, _, _)] = ran(workers.url, "start")
    workers.kill("doomed")
    workers.start("p2", "--lease", "1.5")
    workers.start("p3", "--lease", "1.5")
    # due times from once both are ready: the ones missed while they started (seconds on a
    # loaded machine) are caught up once, as one run, not each
    ready_at = time.time()
    later = [d for d in (start + 2 * k for k in range(1, 200)) if d > ready_at + 2][:3]
    wait_for(lambda: set(later) <= {d for d, _, _ in ran(workers.url)})
    workers.stop("p2")
    workers.stop("p3")
    ends = ran(workers.url)
    counts = Counter(d for d, _, _ in ends)
    assert counts[hung_due] == 1  # the killed run was run again, once, elsewhere
    [(_, by, attempt)] = [e for e in ends if e[0] == hung_due]
    assert by in ("p2", "p3") and attempt == 2
    assert all(n == 1 for n in counts.values()), counts  # no due time doubled
    store = open_postgres_watches(workers.url)
    runs = store.runs(watch["watch_id"], limit=100)
    store.close()
    assert all(r["status"] == "done" for r in runs), [(r["due"], r["status"]) for r in runs]
    assert sorted(counts) == sorted(r["due"] for r in runs)  # every claimed due time ran


def test_a_restart_after_missed_due_times_makes_one_catch_up_run(workers: Workers) -> None:
    workers.start("p1")
    start = float(int(time.time()) + 1)
    watch = add_watch(workers.url, "every 1 second", start)
    wait_for(lambda: len(ran(workers.url)) >= 3)
    workers.stop("p1")
    stopped_at = time.time()
    wait_for(lambda: not any(d > stopped_at for d, _, _ in ran(workers.url, "start")))
    store = open_postgres_watches(workers.url)
    row = store.get(watch["watch_id"])
    assert row is not None and row["next_due"] is not None
    missed_from = row["next_due"]
    time.sleep(max(0.0, missed_from + 2.5 - time.time()))  # at least two due times missed
    restarted_at = time.time()
    workers.start("p1")
    wait_for(lambda: sum(d > restarted_at for d, _, _ in ran(workers.url)) >= 2)
    workers.stop("p1")
    store.close()
    in_the_gap = [d for d, _, _ in ran(workers.url) if missed_from <= d < restarted_at]
    assert in_the_gap == [missed_from]  # the first missed time, once
    assert restarted_at - missed_from > 2  # while two or more due times went by
