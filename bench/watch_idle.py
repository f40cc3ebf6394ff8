"""The watch scheduler's idle cost (issue 57), as CPU seconds per hour, in one run:

- **in a running ``local2 serve``** (``--no-ui``, started cold as a person starts it): with
  100 watches defined and the scheduler on, against the same server with none and against
  ``watch.enabled: false`` (the baseline: serve without watches), side by side over the same
  window; each process's CPU time (user + system, every thread) read from ``/proc``;
- in a bare process that runs only :class:`local2.watch.WatchScheduler` (below).

Four processes run side by side for the same window (SQLite with 0 and 100 watches, Postgres
with 0 and 100, on the test kit's throwaway Postgres): each starts its scheduler, waits out
its start, then measures its own CPU time (user + system, all threads) over ``--window``
seconds, looking every ``--look`` seconds as ``serve`` would. The watches are weekly (none
falls due in the window): what is measured is looking, waking and leases, not research.
The first use of Apprise (loading its plugins) is timed too: a cost ``serve`` pays once.

    .venv/bin/python bench/watch_idle.py [--window 120] [--look 30]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from local2.storage import SqliteWatchStore
from local2.watch import new_watch
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.postgres import TempPostgres
from local2_testkit.serve_process import ServeProcess

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, sys, time
from local2.storage import SqliteWatchStore
from local2.storage._watch_postgres import open_postgres_watches
from local2.watch import DueRuns, WatchScheduler, new_watch
where, count, window, look = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
store = open_postgres_watches(where) if where.startswith("postgresql") else SqliteWatchStore(where)
for i in range(count):
    store.add(new_watch(f"p{i % 10}", f"question {i}", "every monday 07:00", "Europe/Berlin"))
scheduler = WatchScheduler(DueRuns(store), lambda claim: None, look_every_s=look)
scheduler.start()
time.sleep(3)
cpu, wall = time.process_time(), time.monotonic()
time.sleep(window)
cpu, wall = time.process_time() - cpu, time.monotonic() - wall
scheduler.stop()
store.close()
print(json.dumps({"cpu_s": cpu, "wall_s": wall}))
"""


def apprise_first_use() -> tuple[float, float]:
    """CPU and wall seconds of the first ``Apprise.instantiate`` in a fresh process."""
    code = (
        "import time; from apprise import Apprise; t, w = time.process_time(), time.monotonic(); "
        "Apprise.instantiate('json://127.0.0.1:9/x'); "
        "print(time.process_time() - t, time.monotonic() - w)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cpu, wall = done.stdout.split()
    return float(cpu), float(wall)


SERVES = (("off", 0), ("on", 0), ("on", 100))  # (watch.enabled, watches defined)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_home(base: Path, enabled: bool, count: int, look: float, ollama: str) -> Path:
    """A config directory and data directory for one server, its watches defined."""
    conf = base / "conf"
    conf.mkdir(parents=True)
    (conf / "system.yaml").write_text(f"ollama_host: {ollama}\n")
    (conf / "generator.yaml").write_text("backend: ollama\n")
    (conf / "memory.yaml").write_text("enabled: false\n")
    (conf / "critic.yaml").write_text("enabled: false\n")
    (conf / "watch.yaml").write_text(f"enabled: {str(enabled).lower()}\nlook_every_s: {look}\n")
    data = base / "data"
    data.mkdir()
    store = SqliteWatchStore(data / "watches.sqlite")
    for i in range(count):
        store.add(new_watch(f"p{i % 10}", f"question {i}", "every monday 07:00", "Europe/Berlin"))
    store.close()
    return conf


def measure_serves(tmp: Path, window: float, look: float) -> dict[tuple[str, int], float]:
    """CPU seconds per hour of each server in :data:`SERVES`, over the same window."""
    with FakeOllama() as fake, ExitStack() as stack:
        servers = {}
        for enabled, count in SERVES:
            base = tmp / f"serve-{enabled}-{count}"
            conf = serve_home(base, enabled == "on", count, look, fake.url)
            server = ServeProcess(conf, env={"LOCAL2_HOME": str(base / "data")}, cold=True)
            servers[(enabled, count)] = stack.enter_context(server)
        time.sleep(10)  # start-up settled: the model's warm-up, the first look
        pids = {key: s.process.pid for key, s in servers.items() if s.process is not None}
        start = {key: cpu_seconds(pid) for key, pid in pids.items()}
        began = time.monotonic()
        time.sleep(window)
        wall = time.monotonic() - began
        return {key: (cpu_seconds(pid) - start[key]) / wall * 3600 for key, pid in pids.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=float, default=120.0)
    parser.add_argument("--look", type=float, default=30.0)
    parser.add_argument("--bare", action="store_true", help="Also the bare scheduler processes.")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        serves = measure_serves(Path(tmp), args.window, args.look)
    print(f"window {args.window:g} s, looking every {args.look:g} s")
    print("| local2 serve | watches | CPU s per hour | % of a core | vs watches off |")
    print("|---|---:|---:|---:|---:|")
    base = serves[("off", 0)]
    for (enabled, count), per_hour in serves.items():
        ratio = per_hour / base if base else float("nan")
        added = per_hour - base
        print(
            f"| watch.enabled {enabled} | {count} | {per_hour:.2f} ({added:+.2f}) "
            f"| {per_hour / 36:.4f} | {ratio:.2f}x |"
        )
    if args.bare:
        bare(args.window, args.look)


def bare(window: float, look: float) -> None:
    """The scheduler alone, in processes that run nothing else (SQLite and Postgres)."""
    with TempPostgres() as pg, tempfile.TemporaryDirectory() as tmp:
        places = {
            ("sqlite", 0): str(Path(tmp) / "none.sqlite"),
            ("sqlite", 100): str(Path(tmp) / "hundred.sqlite"),
            ("postgres", 0): pg.create_database("none"),
            ("postgres", 100): pg.create_database("hundred"),
        }
        procs = {
            key: subprocess.Popen(
                [sys.executable, "-c", CHILD, where, str(key[1]), str(window), str(look)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for key, where in places.items()
        }
        results = {key: json.loads(proc.communicate()[0]) for key, proc in procs.items()}
    print("\nthe bare scheduler:")
    print("| store | watches | CPU s per hour | % of a core | vs none |")
    print("|---|---:|---:|---:|---:|")
    for engine in ("sqlite", "postgres"):
        base = results[(engine, 0)]["cpu_s"] / results[(engine, 0)]["wall_s"] * 3600
        for count in (0, 100):
            got = results[(engine, count)]
            per_hour = got["cpu_s"] / got["wall_s"] * 3600
            ratio = per_hour / base if base else float("nan")
            print(f"| {engine} | {count} | {per_hour:.2f} | {per_hour / 36:.4f} | {ratio:.2f}x |")
    cpu, wall = apprise_first_use()
    print(f"first Apprise use (plugins loaded): {cpu:.2f} CPU s, {wall:.2f} s wall, once")


if __name__ == "__main__":
    main()
