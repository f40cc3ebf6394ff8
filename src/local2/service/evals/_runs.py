"""Eval runs read: list, show, compare and export a person's runs, and the owner checks
every eval request passes (:mod:`local2.service.evals._evals` runs them).

Someone else's run id answers exactly as an unknown one does (:mod:`local2.service.access`);
an admin may read everyone's runs, each read written down. A run whose manifest says it is
running but whose lock file no process holds was killed: it is listed as ``interrupted``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from local2.config import Settings
from local2.contracts import (
    LOCAL,
    Comparison,
    EvalDetail,
    EvalRunRow,
    Person,
    RunManifest,
    RunState,
)
from local2.errors import NotFound, UnknownEvalRun
from local2.evals import EvalRun, RunStore, compare, latest, summarize
from local2.service.access import Access
from local2.service.evals._setup import RUNS_FOLDER

if TYPE_CHECKING:
    from filelock import FileLock

    from local2.service.evals._runner import QuestionLoop

LOCK_FILE = "run.lock"


def no_eval_run(run_id: str) -> NotFound:
    return UnknownEvalRun(f"No eval run '{run_id}'.")


def run_lock(run: EvalRun) -> FileLock:
    """The lock file a running run holds (released by the OS when its process dies)."""
    from filelock import FileLock  # imported when a run starts or is listed

    return FileLock(str(run.folder / LOCK_FILE), timeout=0, thread_local=False)


def held_elsewhere(run: EvalRun) -> bool:
    """Whether another process (or another run object here) holds the run."""
    from filelock import Timeout  # lazy: filelock: ~26 ms, 21 modules at import

    lock = run_lock(run)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


class EvalRuns:
    """The runs under ``<data dir>/evals``, as their owners (and admins) may read them."""

    def __init__(self, settings: Settings, access: Access) -> None:
        self.settings = settings
        self.access = access
        self.store = RunStore(settings.data_dir / RUNS_FOLDER)
        self._active: dict[str, QuestionLoop] = {}  # the runs going in this process
        self._guard = threading.Condition()  # notified when a run leaves ``_active``

    def runs(self, owner: str | None = LOCAL.name, limit: int = 100) -> list[EvalRunRow]:
        """``owner``'s runs (None: everyone's), newest first, with their accuracy so far."""
        rows = []
        for manifest in self.store.manifests():
            if owner is not None and manifest["owner"] != owner:
                continue
            run = EvalRun(self.store.root / manifest["run_id"])
            summary = summarize(run.records(), len(manifest["selection"]["ids"]))
            rows.append(
                EvalRunRow(
                    run_id=manifest["run_id"],
                    owner=manifest["owner"],
                    status=self._status(run, manifest),
                    created_at=manifest["created_at"],
                    updated_at=manifest["updated_at"],
                    set=manifest["set"]["name"],
                    mode=manifest["mode"],
                    model=manifest["model"],
                    backend=manifest["backend"],
                    provider=str(manifest["settings"].get("search_provider") or ""),
                    grader=manifest["grader"]["model"],
                    grader_is_answerer=manifest["grader"]["is_answerer"],
                    questions=summary["questions"],
                    recorded=summary["recorded"],
                    accuracy=summary["accuracy"],
                )
            )
            if len(rows) >= limit:
                break
        return rows

    def show(self, run_id: str, person: Person = LOCAL) -> EvalDetail:
        """``person``'s run (or anyone's, for an admin: written down) with every question."""
        run = self._readable(run_id, person)
        manifest = run.manifest()
        records = run.records()
        return EvalDetail(
            manifest=manifest,
            status=self._status(run, manifest),
            summary=summarize(records, len(manifest["selection"]["ids"])),
            results=latest(records),
        )

    def compare(self, run_a: str, run_b: str, person: Person = LOCAL) -> Comparison:
        """Two runs on the questions both graded: exact McNemar, worded without calling noise
        a win."""
        a = self._readable(run_a, person)
        b = self._readable(run_b, person)
        return compare(a.records(), b.records(), run_a, run_b)

    def export_csv(self, run_id: str, person: Person = LOCAL, path: Path | None = None) -> Path:
        """The run's results as CSV (``results.csv`` in its folder unless ``path`` says)."""
        return self._readable(run_id, person).export_csv(path)

    def _readable(self, run_id: str, person: Person) -> EvalRun:
        run = self.store.open(run_id)
        owner = run.manifest()["owner"]
        self.access.read(person, "eval", run_id, owner, no_eval_run)
        return run

    def _writable(self, run_id: str, person: Person) -> EvalRun:
        run = self.store.open(run_id)
        if not person.owns(run.manifest()["owner"]):
            raise no_eval_run(run_id)
        return run

    def _status(self, run: EvalRun, manifest: RunManifest) -> RunState:
        if manifest["status"] != "running" or run.run_id in self._active:
            return manifest["status"]
        return "running" if held_elsewhere(run) else "interrupted"
