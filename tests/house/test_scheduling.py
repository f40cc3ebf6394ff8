"""The test run's own scheduling: ``--dist loadfile`` hands out the heaviest files first."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

from tests.kit.scheduling import (
    DURATIONS,
    HeaviestFileFirst,
    heaviest_first,
    make_scheduler,
    recorded_seconds,
)


def test_recorded_files_go_by_their_seconds_and_new_ones_by_their_count() -> None:
    queue = OrderedDict(
        [
            ("tests/test_many.py", dict.fromkeys(map(str, range(40)), False)),
            ("tests/test_new.py", dict.fromkeys(map(str, range(5)), False)),
            ("tests/test_long.py", {"a": False}),
        ]
    )
    seconds = {"test_many.py": 20.0, "test_long.py": 900.0}
    order = list(heaviest_first(queue, seconds, per_test=5.0))
    assert order == ["tests/test_long.py", "tests/test_new.py", "tests/test_many.py"]
    assert heaviest_first(queue, seconds, 5.0)["tests/test_many.py"] == queue["tests/test_many.py"]


def test_the_recorded_durations_name_test_files_that_exist(tmp_path: Path) -> None:
    seconds = recorded_seconds()
    assert seconds, f"{DURATIONS} is missing or empty"
    files = {path.name for path in DURATIONS.parent.glob("*/test_*.py")}  # tests/<feature>/
    assert sum(name in files for name in seconds) >= 0.9 * len(seconds)
    assert recorded_seconds(tmp_path / "none.json") == {}


def test_only_loadfile_gets_the_heaviest_first_scheduler() -> None:
    def config(dist: str) -> SimpleNamespace:
        return SimpleNamespace(getoption=lambda name, default=None: dist)

    assert make_scheduler(config("load"), None) is None
    assert HeaviestFileFirst.__mro__[1].__name__ == "LoadFileScheduling"


def test_seconds_per_file_sums_the_phases_of_a_durations_report() -> None:
    from tests.kit.scheduling import seconds_per_file

    report = """..... [100%]
============================= slowest durations ==============================
12.50s call     tests/test_a.py::test_one
1.50s setup    tests/test_a.py::test_one
3.00s call     tests/test_b.py::test_two[x-1]
0.40s teardown tests/test_c.py::test_three
"""
    assert seconds_per_file(report) == {"test_a.py": 14.0, "test_b.py": 3.0}
