"""Eval runs on disk: one folder per run under ``<data dir>/evals/<run id>/``.

- ``manifest.json``: what decides the results (set, mode, model, grader, prompt version,
  the selected questions, settings) and the run's status; replaced whole on each change.
- ``results.jsonl``: one :class:`~local2.contracts._evals.QuestionResult` per line, appended
  as each question finishes and flushed at once, so a killed run loses at most the question
  it was answering. A line cut short by the kill is set aside when the file is read and cut
  off before the next line is written; a question with a complete line is never asked
  again, except one recorded as failed (``error``), which a resumed run asks again (the last
  line of a question is the one that counts).
- ``results.csv``: written on demand (:meth:`EvalRun.export_csv`).
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import cast

from typing_extensions import TypedDict, Unpack

from local2.contracts import (
    EvalMode,
    GraderInfo,
    QuestionResult,
    RunManifest,
    RunSettings,
    RunState,
    Selection,
)
from local2.errors import EvalFileError, UnknownEvalRun
from local2.evals._grading import PROMPT, PROMPT_VERSION
from local2.evals._results import latest
from local2.evals._sets import Question, QuestionSet
from local2.ids import check_session_id

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
CSV_NAME = "results.csv"
CSV_COLUMNS = (
    "id",
    "question",
    "gold",
    "answer",
    "grade",
    "exact_match",
    "f1",
    "contains_gold",
    "evidence_found",
    "evidence_total",
    "diagnosis",
    "tools",
    "time_s",
    "prompt_tokens",
    "completion_tokens",
    "session_id",
    "error",
    "grader_reasoning",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run these as formulas


def new_run_id(now: float | None = None) -> str:
    """``eval-20261127-142501-3fa9c1``: sorts by time, follows the session-id rule."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"eval-{stamp}-{secrets.token_hex(3)}"


def _version() -> str:
    try:
        return metadata.version("local2")
    except metadata.PackageNotFoundError:
        return "unknown"


def make_manifest(
    qset: QuestionSet,
    chosen: Sequence[Question],
    *,
    mode: EvalMode,
    model: str | None,
    backend: str | None,
    grader_model: str | None,
    grader_backend: str | None,
    grader_prompt: tuple[str, str] = (PROMPT_VERSION, PROMPT),
    owner: str = "local",
    settings: RunSettings | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
    run_id: str | None = None,
    now: float | None = None,
) -> RunManifest:
    """The manifest of a new run: the grader counts as the answerer when it is the same
    model on the same backend; ``grader_prompt`` is its ``(version, prompt)``."""
    at = time.time() if now is None else now
    grader = GraderInfo(
        model=grader_model,
        backend=grader_backend,
        is_answerer=(grader_model, grader_backend) == (model, backend),
        prompt_version=grader_prompt[0],
        prompt=grader_prompt[1],
    )
    selection = Selection(limit=limit, sample=sample, seed=seed, ids=[q.id for q in chosen])
    return RunManifest(
        run_id=run_id or new_run_id(at),
        created_at=at,
        updated_at=at,
        owner=owner,
        status="running",
        set=qset.info(),
        mode=mode,
        model=model,
        backend=backend,
        grader=grader,
        selection=selection,
        # A copy (a manifest made without settings, as a test's, keeps an empty one).
        settings=cast(RunSettings, dict(settings or {})),
        version=_version(),
    )


def _write_json(path: Path, value: object) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(value, out, ensure_ascii=False, indent=2)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def csv_row(result: QuestionResult) -> list[str]:
    evidence = result["evidence"]
    tokens = result["tokens"]
    row: dict[str, object] = {
        **result,
        "gold": " | ".join(result["gold"]),
        "tools": " ".join(result["tools"]),
        "evidence_found": evidence["found"] if evidence else None,
        "evidence_total": evidence["total"] if evidence else None,
        "prompt_tokens": tokens["prompt"] if tokens else None,
        "completion_tokens": tokens["completion"] if tokens else None,
    }
    return [_cell(row.get(column)) for column in CSV_COLUMNS]


class ManifestChanges(TypedDict, total=False):
    """What changes in a run's manifest once it is written (:meth:`EvalRun.update`)."""

    status: RunState
    note: str


class EvalRun:
    """One run's folder: its manifest and its results, safe to append from many threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.run_id = folder.name
        self._lock = threading.Lock()
        self._tail_checked = False

    @property
    def results_path(self) -> Path:
        return self.folder / RESULTS

    def manifest(self) -> RunManifest:
        path = self.folder / MANIFEST
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UnknownEvalRun(f"No eval run '{self.run_id}'.") from None
        except (OSError, ValueError) as exc:
            raise EvalFileError(f"{path}: cannot be read ({exc})") from None
        if not isinstance(value, dict) or value.get("run_id") != self.run_id:
            raise EvalFileError(f"{path}: not this run's manifest")
        return cast(RunManifest, value)

    def update(self, **changes: Unpack[ManifestChanges]) -> RunManifest:
        """Change manifest fields (``status``, ``note``) and stamp ``updated_at``."""
        with self._lock:
            manifest = dict(self.manifest())
            manifest.update(changes, updated_at=time.time())
            _write_json(self.folder / MANIFEST, manifest)
            return cast(RunManifest, manifest)

    def records(self) -> list[QuestionResult]:
        """Every complete line, in order (a line cut short at the end is left out)."""
        try:
            data = self.results_path.read_bytes()
        except FileNotFoundError:
            return []
        lines = data.split(b"\n")[:-1]  # the piece after the last newline is unfinished
        records = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                raise EvalFileError(
                    f"{self.results_path}: line {number} is not JSON",
                    fix="delete that line: its question is asked again when the run resumes",
                ) from None
            records.append(cast(QuestionResult, value))
        return records

    def results(self) -> list[QuestionResult]:
        """The last record of each question."""
        return latest(self.records())

    def done(self) -> set[str]:
        """The questions a resumed run must not ask again: recorded, and not failed."""
        return {r["id"] for r in self.results() if r["error"] is None}

    def append(self, result: QuestionResult) -> None:
        """Add one question's record as one whole line, flushed before returning."""
        line = (json.dumps(result, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            if not self._tail_checked:
                self._cut_unfinished_line()
                self._tail_checked = True
            with self.results_path.open("ab") as out:
                out.write(line)
                out.flush()

    def _cut_unfinished_line(self) -> None:
        """Drop what a killed writer left after the last newline."""
        try:
            with self.results_path.open("rb+") as handle:
                data = handle.read()
                if data and not data.endswith(b"\n"):
                    handle.truncate(data.rfind(b"\n") + 1)
        except FileNotFoundError:
            return

    def export_csv(self, path: Path | None = None) -> Path:
        """The results as CSV (``results.csv`` in the run folder unless ``path`` says);
        cells a spreadsheet would run as formulas are quoted with a leading ``'``."""
        target = path or self.folder / CSV_NAME
        with target.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(CSV_COLUMNS)
            writer.writerows(csv_row(r) for r in self.results())
        return target


class RunStore:
    """The runs under one folder (``<data dir>/evals``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def create(self, manifest: RunManifest) -> EvalRun:
        """A new run folder with ``manifest`` (its ``run_id`` must be new)."""
        run_id = check_session_id(manifest["run_id"], "eval run id")
        folder = self.root / run_id
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir()
        except FileExistsError:
            raise EvalFileError(f"{folder}: a run with this id exists already") from None
        _write_json(folder / MANIFEST, manifest)
        return EvalRun(folder)

    def open(self, run_id: str) -> EvalRun:
        check_session_id(run_id, "eval run id")
        run = EvalRun(self.root / run_id)
        run.manifest()  # UnknownEvalRun when there is none
        return run

    def manifests(self) -> list[RunManifest]:
        """Every run's manifest, newest first (a folder without a readable one is skipped)."""
        found = []
        for folder in self.root.glob("*/") if self.root.is_dir() else []:
            try:
                found.append(EvalRun(folder).manifest())
            except (UnknownEvalRun, EvalFileError):
                continue
        return sorted(found, key=lambda m: (m["created_at"], m["run_id"]), reverse=True)
