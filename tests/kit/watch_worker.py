"""One process's scheduler on a shared watch store, for tests/watch/test_watch_processes.py (and
bench/watch_idle.py): ``python -m tests.kit.watch_worker URL NAME [--hang-first] [--work S]``.

Each run it makes is written to the ``test_ran`` table (no constraint: a due time run twice
would show twice), a row when it starts and one when it ends. ``--hang-first``: the first
run never ends (the test kills the process with SIGKILL there). SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

import psycopg

from local2.storage._watch_postgres import open_postgres_watches
from local2.watch import DueRun, DueRuns, WatchScheduler

RAN_TABLE = """CREATE TABLE IF NOT EXISTS test_ran (
    watch_id TEXT, due DOUBLE PRECISION, claimer TEXT, phase TEXT, attempt INTEGER,
    at DOUBLE PRECISION)"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("name")
    parser.add_argument("--hang-first", action="store_true")
    parser.add_argument("--work", type=float, default=0.2)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--look", type=float, default=0.5)
    args = parser.parse_args()
    hung = threading.Event()
    stop = threading.Event()

    def note(claim: DueRun, phase: str) -> None:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO test_ran VALUES (%s, %s, %s, %s, %s, %s)",
                (claim.watch["watch_id"], claim.due, args.name, phase, claim.attempt, time.time()),
            )

    def runner(claim: DueRun) -> None:
        note(claim, "start")
        if args.hang_first and not hung.is_set():
            hung.set()
            stop.wait()  # until killed
        time.sleep(args.work)
        note(claim, "end")

    store = open_postgres_watches(args.url)
    scheduler = WatchScheduler(
        DueRuns(store, claimer=args.name, lease_s=args.lease), runner, look_every_s=args.look
    )
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    scheduler.start()
    print("ready", flush=True)
    stop.wait()
    scheduler.stop(wait=False)
    store.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
