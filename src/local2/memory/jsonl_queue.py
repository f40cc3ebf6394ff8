"""Memory work that waits: a JSON-lines file under the data directory, shared by processes.

Two kinds of work wait here: a turn whose ingest failed (``memory_retry.jsonl``, retried
before the next ingest) and an annotation asked for while memory was not open
(``memory_annotations.jsonl``, :mod:`local2.memory.deferred`). Any process appends; whichever
has memory open drains.

An append is one line written under a short file lock. A drain takes the same lock only to
move the file aside (``<name>.draining``), so a line appended meanwhile starts a new file and
is never lost, then does the work without holding it: an append never waits for Chroma or an
embedding server. What a drain leaves undone (the store failed again) goes back to the head
of the queue; what a drain that died part-way left in the moved-aside file goes first in the
next drain: the order is kept. Doing a record twice must be harmless: a drain that dies
after the work but before recording it repeats it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

log = logging.getLogger(__name__)

# A record of the queue: what its writer appends, and what a line read back is taken for once
# ``valid`` has accepted it.
Record = TypeVar("Record", bound=Mapping[str, Any])
LOCK_TIMEOUT_S = 10.0


def _any(record: Mapping[str, Any]) -> bool:
    return True


class JsonlQueue(Generic[Record]):
    """Records waiting in ``path``, oldest first; see the module's docstring for the rules."""

    def __init__(
        self,
        path: str | Path,
        *,
        valid: Callable[[Mapping[str, Any]], bool] = _any,  # a line's JSON object, unchecked
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        self.draining = self.path.with_name(self.path.name + ".draining")
        self.valid = valid
        self.lock_timeout_s = lock_timeout_s
        self._append_lock = self.path.with_name(f".{self.path.name}.lock")
        self._drain_lock = self.path.with_name(f".{self.path.name}.drain.lock")
        self._one_drain = threading.Lock()  # threads of one process (file locks are per fd)

    def waiting(self) -> bool:
        """Whether anything is queued: two ``stat`` calls, cheap enough before every recall."""
        return self.path.exists() or self.draining.exists()

    def append(self, record: Record) -> None:
        """Queue ``record``. Raises :class:`OSError` if it cannot be written (a lock that
        is not released within ``lock_timeout_s`` raises :class:`TimeoutError`, one too)."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(self._append_lock), self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)

    def drain(
        self,
        apply: Callable[[Record], object],
        *,
        compact: Callable[[list[Record]], list[Record]] | None = None,
    ) -> int:
        """Apply the queued records oldest first (after ``compact``, if given); returns how
        many were applied. The first failure is raised; it and the records after it stay
        queued for the next drain."""
        if not self.waiting():  # the usual case: no lock taken, nothing imported
            return 0
        done = 0
        with self._one_drain, self._locked(self._drain_lock):
            for _ in range(2):  # what an earlier drain left, then what is queued now
                if not self.draining.exists() and not self._move_aside():
                    break
                records = self.read(self.draining)
                if compact is not None:
                    records = compact(records)
                applied = 0
                try:
                    for record in records:
                        apply(record)
                        applied += 1
                finally:
                    self._keep(records[applied:])
                    done += applied
        return done

    def read(self, path: Path | None = None) -> list[Record]:
        """The valid records in ``path`` (default: the queue); a malformed line is dropped."""
        try:
            lines = (path or self.path).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        records: list[Record] = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict) and self.valid(record):
                records.append(cast(Record, record))  # a JSON object its check accepted
            else:
                log.warning("%s: dropping a malformed line", self.path.name)
        return records

    def _move_aside(self) -> bool:
        with self._locked(self._append_lock):
            try:
                os.replace(self.path, self.draining)
            except FileNotFoundError:
                return False
        return True

    def _keep(self, records: list[Record]) -> None:
        """Put what is left undone back at the head of the queue, before what was appended
        meanwhile, then drop the moved-aside file (dying in between repeats some work)."""
        if records:
            with self._locked(self._append_lock):
                lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in records]
                with suppress(FileNotFoundError):
                    lines.append(self.path.read_text(encoding="utf-8"))
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(lines), encoding="utf-8")
                tmp.replace(self.path)
        self.draining.unlink(missing_ok=True)

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        from filelock import FileLock  # a few ms to import: only when the queue is used

        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(path, timeout=self.lock_timeout_s):
            yield
