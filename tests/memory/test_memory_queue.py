"""The memory work queue (`local2.memory._owners`): shared by processes, order kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from local2.memory._owners import JsonlQueue

WRITER = """
import sys
from local2.memory._owners import JsonlQueue

queue = JsonlQueue(sys.argv[1])
for i in range(int(sys.argv[3])):
    queue.append({"writer": sys.argv[2], "i": i})
"""


def test_records_appended_by_two_processes_during_drains_are_each_applied_once(
    tmp_path: Path,
) -> None:
    queue = JsonlQueue(tmp_path / "work.jsonl")
    per_writer = 1500
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(queue.path), name, str(per_writer)])
        for name in ("a", "b")
    ]
    applied: list[tuple[str, int]] = []
    drains_with_work = 0
    while any(w.poll() is None for w in writers):
        if queue.drain(lambda r: applied.append((r["writer"], r["i"]))):
            drains_with_work += 1
    assert [w.returncode for w in writers] == [0, 0]
    queue.drain(lambda r: applied.append((r["writer"], r["i"])))
    assert drains_with_work >= 2, "the drains should have raced the writers"
    expected = [(name, i) for name in ("a", "b") for i in range(per_writer)]
    assert sorted(applied) == expected  # none lost, none twice
    for name in ("a", "b"):  # and each writer's records in the order written
        assert [i for w, i in applied if w == name] == list(range(per_writer))
    assert not queue.waiting()


def test_a_failed_drain_keeps_the_rest_first_in_order(tmp_path: Path) -> None:
    queue = JsonlQueue(tmp_path / "work.jsonl")
    for n in range(4):
        queue.append({"n": n})
    applied: list[int] = []

    def apply(record: dict[str, Any]) -> None:
        if record["n"] == 0:
            queue.append({"n": 4})  # another process appends during the drain
        if record["n"] == 2:
            raise ConnectionError("store down")
        applied.append(record["n"])

    with pytest.raises(ConnectionError):
        queue.drain(apply)
    assert applied == [0, 1]
    assert [r["n"] for r in queue.read()] == [2, 3, 4]
    assert queue.drain(lambda r: applied.append(r["n"])) == 3
    assert applied == [0, 1, 2, 3, 4] and not queue.waiting()


def test_work_left_by_a_drain_that_died_goes_first(tmp_path: Path) -> None:
    queue = JsonlQueue(tmp_path / "work.jsonl")
    queue.draining.write_text("".join(json.dumps({"n": n}) + "\n" for n in (0, 1)))
    queue.append({"n": 2})
    assert queue.waiting()
    applied: list[int] = []
    assert queue.drain(lambda r: applied.append(r["n"])) == 3
    assert applied == [0, 1, 2] and not queue.waiting()


def test_malformed_lines_are_dropped(tmp_path: Path) -> None:
    queue = JsonlQueue(tmp_path / "work.jsonl", valid=lambda r: "n" in r)
    queue.path.write_text('{"n": 1}\nnot json\n{"m": 2}\n[3]\n{"n": 4}\n')
    assert [r["n"] for r in queue.read()] == [1, 4]
