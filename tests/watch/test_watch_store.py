"""The watch store and the claiming of due runs, on SQLite and on a real Postgres: each due
time is claimed once, however many claimers race; missed times make one catch-up run; a
run whose process stopped is taken over without moving the next due time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.storage import SqliteWatchStore, WatchStore
from local2.storage._watch_postgres import open_postgres_watches
from local2.watch import DueRun, DueRuns, new_watch, parse_schedule

HOUR = 3600.0


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Opens stores on one database: a SQLite file, or a fresh Postgres database."""
    opened: list[WatchStore] = []
    if request.param == "sqlite":
        path = tmp_path / "watches.sqlite"

        def open_one() -> WatchStore:
            opened.append(SqliteWatchStore(path))
            return opened[-1]
    else:
        url = request.getfixturevalue("postgres_url")

        def open_one() -> WatchStore:
            opened.append(open_postgres_watches(url))
            return opened[-1]

    yield open_one
    for store in opened:
        store.close()  # type: ignore[attr-defined]


def hourly(owner: str = "alice", hours_ago: float = 0.0, **extra: Any) -> Any:
    """An hourly watch added ``hours_ago`` (so that many due times have passed)."""
    added = float(int(time.time() - hours_ago * HOUR))  # whole seconds: exact sums below
    return new_watch(owner, "What is new in solar?", "every hour", "UTC", now=added, **extra)


def test_racing_claimers_take_each_due_time_once(engine: Any) -> None:
    stores = [engine() for _ in range(2)]
    row = hourly(hours_ago=1.5)  # one due time has come
    stores[0].add(row)
    claims: list[Any] = []
    start = threading.Barrier(8)

    def race(i: int) -> None:
        due = DueRuns(stores[i % 2], claimer=f"p{i}")
        start.wait()
        claims.extend(due.claim())

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claims) == 1
    assert claims[0].due == row["next_due"]
    after = stores[1].get(row["watch_id"])
    assert after is not None and after["next_due"] == row["anchor"] + 2 * HOUR
    [run] = stores[1].runs(row["watch_id"])
    assert (run["status"], run["attempts"], run["run_id"]) == ("running", 1, claims[0].run_id)


def test_downtime_that_missed_nine_due_times_makes_one_catch_up_run(engine: Any) -> None:
    store = engine()
    row = hourly(hours_ago=9.5)
    store.add(row)
    due = DueRuns(store, claimer="p1")
    ran: list[DueRun] = []
    claims = due.run_due(lambda c: ran.append(c) or {"nothing_new": True})
    assert [c.due for c in claims] == [row["anchor"] + HOUR]  # the first missed time, once
    assert due.run_due(lambda c: ran.append(c) or None) == []
    now_row = store.get(row["watch_id"])
    assert now_row is not None
    assert time.time() < now_row["next_due"] <= time.time() + HOUR  # type: ignore[operator]
    assert now_row["next_due"] == row["anchor"] + 10 * HOUR
    [run] = store.runs(row["watch_id"])
    assert run["status"] == "done" and run["summary"] == {"nothing_new": True}
    assert len(ran) == 1


def test_a_run_whose_process_stopped_is_taken_over_and_the_next_due_time_not_doubled(
    engine: Any,
) -> None:
    first, second = engine(), engine()
    row = hourly(hours_ago=1.2)
    first.add(row)
    dead = DueRuns(first, claimer="dead", lease_s=0.3)
    [claimed] = dead.claim()  # ... and never runs it: the process "died"
    moved = first.get(row["watch_id"])
    assert moved is not None
    alive = DueRuns(second, claimer="alive", lease_s=30)
    assert alive.claim() == []  # the lease still holds
    time.sleep(0.5)
    [taken] = alive.claim()
    assert (taken.due, taken.run_id, taken.attempt) == (claimed.due, claimed.run_id, 2)
    assert alive.claim() == []  # taken once; the next due time is an hour away
    assert alive.run(taken, lambda c: None)
    assert not first.finish(row["watch_id"], claimed.due, "dead", "done")  # too late
    after = second.get(row["watch_id"])
    assert after is not None and after["next_due"] == moved["next_due"]
    [run] = second.runs(row["watch_id"])
    assert (run["status"], run["claimed_by"], run["attempts"]) == ("done", "alive", 2)


def test_a_run_that_keeps_killing_its_process_is_given_up(engine: Any) -> None:
    store = engine()
    row = hourly(hours_ago=1.2)
    store.add(row)
    for n in range(2):
        assert DueRuns(store, claimer=f"p{n}", lease_s=0.1, max_attempts=2).claim()
        time.sleep(0.2)
    assert DueRuns(store, claimer="p3", lease_s=0.1, max_attempts=2).claim() == []
    [run] = store.runs(row["watch_id"])
    assert run["status"] == "failed" and "stopped 2 times" in (run["error"] or "")


def test_a_lease_is_renewed_while_the_run_goes_on(engine: Any) -> None:
    mine, other = engine(), engine()
    row = hourly(hours_ago=1.2)
    mine.add(row)
    runs = DueRuns(mine, claimer="mine", lease_s=0.6)
    stolen: list[Any] = []

    def slow(claim: DueRun) -> None:
        for _ in range(6):
            time.sleep(0.25)
            stolen.extend(DueRuns(other, claimer="other", lease_s=0.6).claim())

    assert len(runs.run_due(slow)) == 1
    assert stolen == []
    [run] = mine.runs(row["watch_id"])
    assert (run["status"], run["attempts"]) == ("done", 1)


def test_a_failing_run_is_recorded_and_the_schedule_goes_on(engine: Any) -> None:
    store = engine()
    row = hourly(hours_ago=1.2)
    store.add(row)

    def broken(claim: DueRun) -> None:
        raise RuntimeError("the model server went away")

    assert len(DueRuns(store, claimer="p").run_due(broken)) == 1
    [run] = store.runs(row["watch_id"])
    assert run["status"] == "failed" and run["error"] == "the model server went away"
    after = store.get(row["watch_id"])
    assert after is not None and after["next_due"] == row["anchor"] + 2 * HOUR


def test_paused_watches_are_not_due_and_resume_from_now(engine: Any) -> None:
    store = engine()
    row = hourly(hours_ago=3.5)
    store.add(row)
    assert store.set_paused(row["watch_id"], True, row["next_due"])
    assert store.due(time.time()) == [] and DueRuns(store).claim() == []
    schedule = parse_schedule(row["schedule"], row["timezone"], anchor=row["anchor"])
    assert store.set_paused(row["watch_id"], False, schedule.next_after_ts(time.time()))
    resumed = store.get(row["watch_id"])
    assert resumed is not None and resumed["next_due"] == row["anchor"] + 4 * HOUR
    assert not store.set_paused("w-none", True, None)


def test_each_persons_watches_are_their_own(engine: Any) -> None:
    store = engine()
    alices, bobs = hourly("alice"), hourly("bob")
    store.add(alices)
    store.add(bobs)
    assert store.get(alices["watch_id"], owner="bob") is None
    assert store.get(alices["watch_id"], owner="alice") == alices
    assert [w["watch_id"] for w in store.owned_by("bob")] == [bobs["watch_id"]]
    assert store.count("alice") == 1


def test_notices_are_kept_once_per_run_and_read_marks_are_the_owners(engine: Any) -> None:
    store = engine()
    row = hourly()
    store.add(row)
    notice = {
        "notice_id": "n1", "owner": "alice", "watch_id": row["watch_id"], "due": 1.0,
        "run_id": "r1", "title": "t", "body": "b", "created_at": time.time(), "read_at": None,
    }  # fmt: skip
    assert store.add_notice(notice)  # type: ignore[arg-type]
    assert not store.add_notice({**notice, "title": "again"})  # type: ignore[typeddict-item]
    store.mark_read("bob", ["n1"])
    assert [n["title"] for n in store.notices("alice", unread=True)] == ["t"]
    store.mark_read("alice", ["n1"])
    assert store.notices("alice", unread=True) == []
    assert store.notices("bob") == []


def test_removing_a_watch_removes_what_was_kept_of_it(engine: Any) -> None:
    store = engine()
    row = hourly(hours_ago=1.2)
    store.add(row)
    DueRuns(store).run_due(lambda c: None)
    store.record_delivery(
        {"watch_id": row["watch_id"], "due": 1.0, "target": "json://x", "attempt": 1,
         "ok": True, "error": None, "at": 1.0}
    )  # fmt: skip
    assert store.runs(row["watch_id"]) and store.deliveries(row["watch_id"])
    assert store.remove(row["watch_id"])
    assert store.get(row["watch_id"]) is None
    assert store.runs(row["watch_id"]) == [] and store.deliveries(row["watch_id"]) == []
    assert not store.remove(row["watch_id"])


def test_two_runs_made_now_in_one_second_are_two_runs(engine: Any) -> None:
    """``local2 watch run`` twice in one second: two runs (ids count milliseconds for runs
    made now), each comparing with the one before; the same millisecond is refused."""
    store = engine()
    row = hourly()
    store.add(row)
    seen: list[DueRun] = []

    def ran(claim: DueRun) -> dict[str, Any]:
        seen.append(claim)
        return {"nothing_new": True}

    due = DueRuns(store, claimer="p", lease_s=30)
    second = float(int(time.time()))
    first = due.run_now(row, ran, now=second + 0.25)
    again = due.run_now(row, ran, now=second + 0.75)
    assert first is not None and again is not None
    assert first.run_id == f"{row['watch_id']}-{int(second)}-250"
    assert again.run_id == f"{row['watch_id']}-{int(second)}-750"
    assert again.previous_run_id == first.run_id  # the second compares with the first
    assert again.previous_started_at is not None
    assert due.run_now(row, ran, now=second + 0.75) is None  # that very millisecond: taken
    runs = store.runs(row["watch_id"])
    assert [r["run_id"] for r in runs] == [again.run_id, first.run_id]
    assert [r["status"] for r in runs] == ["done", "done"] and len(seen) == 2
    whole = due.run_now(row, ran, now=second + 2)
    assert whole is not None and whole.run_id == f"{row['watch_id']}-{int(second) + 2}"
