"""Heaviest test file first, for ``pytest -n 4 --dist loadfile`` (see conftest).

xdist's ``loadfile`` hands out files in order of how many tests each has, so a file of one
long test (``local2 eval demo`` on the embedded model, minutes) could start last and run
alone while the other worker sits idle. Handing out the longest first (LPT scheduling)
leaves only short files for the end. The weights are the seconds each file took in a
recorded run (``tests/durations.json``, written from ``--durations=0``; see bench/HISTORY.md,
"The suite's time"); a file not recorded yet weighs its test count times the mean per test.
Only the order changes: every test still runs, in its own file's worker.

Refresh the weights from a run's output (``pytest ... --durations=0 > run.txt``):

    python -m tests.kit.scheduling run.txt    # rewrites tests/durations.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadFileScheduling

DURATIONS = Path(__file__).parents[1] / "durations.json"


def recorded_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds per test file (its name under tests/) from the recorded run; {} if none."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def heaviest_first(
    queue: OrderedDict[str, dict[str, bool]], seconds: dict[str, float], per_test: float
) -> OrderedDict[str, dict[str, bool]]:
    """The work queue (file -> its tests) reordered, longest expected file first."""

    def weight(item: tuple[str, dict[str, bool]]) -> float:
        scope, tests = item
        return seconds.get(Path(scope).name, len(tests) * per_test)

    return OrderedDict(sorted(queue.items(), key=weight, reverse=True))


class HeaviestFileFirst(LoadFileScheduling):
    """``loadfile`` with the files handed out heaviest first."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._ordered = False

    def _assign_work_unit(self, node: Any) -> None:
        if not self._ordered:  # the queue is complete by the first assignment
            seconds = recorded_seconds()
            per_test = 1.0
            if seconds:
                per_test = sum(seconds.values()) / max(len(self.collection or ()), 1)
            reordered = heaviest_first(self.workqueue, seconds, per_test)
            self.workqueue.clear()
            self.workqueue.update(reordered)
            self._ordered = True
        super()._assign_work_unit(node)


def make_scheduler(config: Any, log: Any) -> HeaviestFileFirst | None:
    """The scheduler of ``--dist loadfile`` (the conftest's ``pytest_xdist_make_scheduler``);
    None leaves xdist's own for every other mode."""
    if config.getoption("dist", None) != "loadfile":
        return None
    return HeaviestFileFirst(config, log)


def seconds_per_file(report: str) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown summed) from ``--durations=0`` output."""
    listed = report[report.find("slowest durations") :]
    totals: Counter[str] = Counter()
    for seconds, node in re.findall(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+)", listed, re.M):
        totals[Path(node.split("::")[0]).name] += float(seconds)
    return {name: round(s, 1) for name, s in totals.most_common() if s >= 1}


if __name__ == "__main__":
    found = seconds_per_file(Path(sys.argv[1]).read_text())
    DURATIONS.write_text(json.dumps(found, indent=0) + "\n")
    print(f"{DURATIONS}: {len(found)} files, {sum(found.values()):.0f} s")
