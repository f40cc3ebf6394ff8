"""Question sets: what a set is once read, how one is found and how a run picks from it.

A set is read from a path the person gives (or ``demo``, the set shipped in the package);
nothing is ever downloaded. Its format comes from the path: a ``.csv`` is SimpleQA's, a
``.jsonl`` is LoCAL2's JSON lines, a ``.json`` is HotpotQA's, a folder holds documents and a
questions file (:mod:`local2.evals._readers` reads each one). Where each public set is
published is in ``docs/evals.md``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from local2.contracts import SetFormat, SetInfo
from local2.errors import EvalFileError, InvalidInput
from local2.tools import CorpusDocument

DEMO = "demo"
DEMO_PATH = Path(__file__).resolve().parent / "demo"
FORMATS: dict[str, SetFormat] = {".csv": "simpleqa", ".jsonl": "jsonl", ".json": "hotpotqa"}


@dataclass(frozen=True)
class Question:
    """One question: its gold answers (any one counts) and, when the set has it, the gold
    evidence sentences an answer needs."""

    id: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[str, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class QuestionSet:
    """A set as read: its questions in file order, its corpus (empty: the run uses the web)
    and what reading it left out (``notes``)."""

    name: str
    path: Path
    format: SetFormat
    questions: tuple[Question, ...]
    documents: tuple[CorpusDocument, ...] = ()
    fingerprint: str = ""
    notes: tuple[str, ...] = ()

    def info(self) -> SetInfo:
        return SetInfo(
            name=self.name,
            path=str(self.path),
            format=self.format,
            fingerprint=self.fingerprint,
            questions=len(self.questions),
            documents=len(self.documents),
        )

    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}


def set_path(name_or_path: str | Path) -> Path:
    """``demo`` is the shipped set; anything else is a path (``~`` expanded)."""
    if str(name_or_path) == DEMO:
        return DEMO_PATH
    return Path(name_or_path).expanduser()


def format_of(path: Path) -> SetFormat:
    """The set format a path is read as, or an error listing the ones there are."""
    if path.is_dir():
        return "folder"
    if not path.exists():
        raise EvalFileError(
            f"{path}: no such file or folder",
            fix="give the path of a set file or folder (or 'demo' for the shipped set)",
        )
    known = FORMATS.get(path.suffix.lower())
    if known is None:
        raise EvalFileError(
            f"{path}: not a set format LoCAL2 reads",
            fix="use SimpleQA's .csv, a .jsonl of questions, HotpotQA's .json, or a folder of "
            "documents with questions.jsonl (see docs/evals.md)",
        )
    return known


def fingerprint(files: Iterable[Path], root: Path) -> str:
    """sha256 over the files' names (under ``root``) and bytes: changes when the set does."""
    digest = hashlib.sha256()
    for file in sorted(files, key=lambda p: p.as_posix()):
        name = file.relative_to(root).as_posix() if file != root else file.name
        digest.update(name.encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def check_unique(questions: Sequence[Question], path: Path) -> None:
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise EvalFileError(
                f"{path}: question id '{q.id}' is used twice", fix="give each question its own id"
            )
        seen.add(q.id)


def select(
    questions: Sequence[Question],
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
) -> list[Question]:
    """The questions a run asks: a random ``sample`` (the same for the same ``seed``, kept in
    set order), then the first ``limit`` of those."""
    chosen = list(questions)
    if sample is not None:
        if sample < 1:
            raise InvalidInput(f"--sample {sample}: ask for at least one question")
        if sample < len(chosen):
            picked = set(random.Random(seed).sample(range(len(chosen)), sample))
            chosen = [q for i, q in enumerate(chosen) if i in picked]
    if limit is not None:
        if limit < 1:
            raise InvalidInput(f"--limit {limit}: ask for at least one question")
        chosen = chosen[:limit]
    return chosen
