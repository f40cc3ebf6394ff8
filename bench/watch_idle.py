"""Scratch (issue 57, to be finished in a running ``local2 serve`` once watches are wired in):
the watch scheduler's idle cost, as CPU seconds per hour of a process that runs only
:class:`local2.watch.WatchScheduler`, with 100 watches defined against none, in one run.

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
import subprocess
import sys
import tempfile
from pathlib import Path

from local2_testkit.postgres import TempPostgres

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=float, default=120.0)
    parser.add_argument("--look", type=float, default=30.0)
    args = parser.parse_args()

    with TempPostgres() as pg, tempfile.TemporaryDirectory() as tmp:
        places = {
            ("sqlite", 0): str(Path(tmp) / "none.sqlite"),
            ("sqlite", 100): str(Path(tmp) / "hundred.sqlite"),
            ("postgres", 0): pg.create_database("none"),
            ("postgres", 100): pg.create_database("hundred"),
        }
        procs = {
            key: subprocess.Popen(
                [sys.executable, "-c", CHILD, where, str(key[1]), str(args.window), str(args.look)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for key, where in places.items()
        }
        results = {key: json.loads(proc.communicate()[0]) for key, proc in procs.items()}
    print(f"window {args.window:g} s, looking every {args.look:g} s")
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
