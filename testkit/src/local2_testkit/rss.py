"""How much memory this process added over a block of code, at its peak.

For the bounded-extraction test and benchmark: on Linux the kernel's own high-water mark
(``VmHWM``) is reset through ``/proc/self/clear_refs`` and read afterwards, so even a
spike between two samples counts; elsewhere a thread samples ``VmRSS`` (or nothing).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_STATUS = Path("/proc/self/status")


def _status_kb(field: str) -> int | None:
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.M)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass
class PeakRss:
    before_kb: int = 0
    peak_kb: int = 0

    @property
    def added_mb(self) -> float:
        return max(self.peak_kb - self.before_kb, 0) / 1024


@contextlib.contextmanager
def peak_rss() -> Iterator[PeakRss]:
    """Measure the peak resident set size over the ``with`` block (``added_mb`` after it)."""
    result = PeakRss(before_kb=_status_kb("VmRSS") or 0)
    result.peak_kb = result.before_kb
    exact = _reset_peak()
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.005):
            result.peak_kb = max(result.peak_kb, _status_kb("VmRSS") or 0)

    sampler = None if exact else threading.Thread(target=sample, daemon=True)
    if sampler is not None:
        sampler.start()
    try:
        yield result
    finally:
        stop.set()
        if sampler is not None:
            sampler.join()
        result.peak_kb = max(result.peak_kb, _status_kb("VmHWM" if exact else "VmRSS") or 0)
