"""The four set formats, each read into a :class:`~local2.evals._sets.QuestionSet`.

- **SimpleQA's CSV** (``metadata``, ``problem``, ``answer``; ``question`` may stand for
  ``problem``): one gold answer per row, ids ``row-1``, ``row-2``... in file order.
- **JSON lines**, one question per line::

      {"id": "q1", "question": "...", "answers": ["...", "..."],
       "evidence": ["a gold sentence", ...], "documents": ["text", {"id", "title", "text"}],
       "meta": {"type": "bridge"}}

  ``evidence``, ``documents`` and ``meta`` are optional; the documents of all questions
  form the set's corpus (a text without an id is ``<question id>/<n>``).
- **HotpotQA's JSON** (a list of records; the original keys or the dataset-viewer form with
  dicts of lists): each ``context`` paragraph becomes a corpus document named by its title,
  each ``supporting_facts`` pair ``[title, sentence number]`` a gold evidence sentence.
- **A folder**: ``questions.jsonl`` (the JSON lines above) or ``questions.csv`` (SimpleQA's
  columns), and every ``.md``/``.txt`` file under the folder as a corpus document.

Every problem names the file, the line (or record) and the fix.
"""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from local2.contracts import SetFormat
from local2.errors import EvalFileError
from local2.evals._sets import Question, QuestionSet, check_unique, fingerprint, format_of
from local2.tools import (
    CorpusDocument,
    folder_files,
    json_lines,
    pydantic_problem,
    read_folder,
    reading,
)

QUESTION_FILES = ("questions.jsonl", "questions.csv")
JSONL_FIX = (
    'each line is {"id": "...", "question": "...", "answers": ["..."]} with optional '
    '"evidence": ["..."], "documents": ["..." or {"id", "title", "text"}] and "meta": {...}'
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is empty")
    return value.strip()


class _DocumentRef(_Strict):
    id: str | int | None = None
    title: str = ""
    text: str

    _text = field_validator("text")(_not_blank)


class _QuestionLine(_Strict):
    id: str | int
    question: str
    answers: list[str] = Field(min_length=1)
    evidence: list[str] = Field(default_factory=list)
    documents: list[str | _DocumentRef] = Field(default_factory=list)
    meta: dict[str, str | int | float | bool | None] = Field(default_factory=dict)

    _question = field_validator("question")(_not_blank)

    @field_validator("answers", "evidence")
    @classmethod
    def _no_blank_items(cls, values: list[str]) -> list[str]:
        if any(not v.strip() for v in values):
            raise ValueError("has an empty entry")
        return [v.strip() for v in values]


class _Corpus:
    """Documents gathered from many questions: one per id, the same id never two texts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.documents: dict[str, CorpusDocument] = {}
        self.where: dict[str, str] = {}

    def add(self, doc: CorpusDocument, where: str) -> None:
        known = self.documents.get(doc.id)
        if known is None:
            self.documents[doc.id] = doc
            self.where[doc.id] = where
        elif known.text.strip() != doc.text.strip():
            raise EvalFileError(
                f"{self.path}: {where}: document '{doc.id}' has another text than on "
                f"{self.where[doc.id]}",
                fix="give different documents different ids",
            )


def _meta(values: Mapping[str, object]) -> dict[str, str]:
    return {k: str(v) for k, v in values.items() if v is not None}


def read_questions_jsonl(path: Path, corpus: _Corpus | None = None) -> list[Question]:
    """Questions from a JSON lines file; their documents go to ``corpus``."""
    corpus = corpus or _Corpus(path)
    questions = []
    for number, value in json_lines(path):
        if isinstance(value, dict) and "answer" in value and "answers" not in value:
            raise EvalFileError(
                f"{path}: line {number}: 'answer' where 'answers' (a list) belongs",
                fix='gold answers go in a list, any one of them correct: "answers": ["..."]',
            )
        try:
            row = _QuestionLine.model_validate(value)
        except ValidationError as exc:
            raise EvalFileError(
                f"{path}: line {number}: {pydantic_problem(exc)}", fix=JSONL_FIX
            ) from None
        qid = str(row.id).strip()
        if not qid:
            raise EvalFileError(f"{path}: line {number}: the id is empty", fix=JSONL_FIX)
        for n, ref in enumerate(row.documents, 1):
            if isinstance(ref, str):
                ref = _DocumentRef(text=ref)
            doc_id = str(ref.id).strip() if ref.id is not None else f"{qid}/{n}"
            title = ref.title.strip() or ref.text.split("\n", 1)[0][:80].strip() or doc_id
            corpus.add(CorpusDocument(doc_id, title, ref.text), f"line {number}")
        questions.append(
            Question(qid, row.question, tuple(row.answers), tuple(row.evidence), _meta(row.meta))
        )
    return questions


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    with reading(path), path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        try:
            header = [h.strip().lower() for h in reader.fieldnames or []]
            reader.fieldnames = header
            if "answer" not in header or not {"problem", "question"} & set(header):
                raise EvalFileError(
                    f"{path}: line 1: the header {header} has no 'problem' and 'answer' columns",
                    fix="SimpleQA's CSV starts with the header metadata,problem,answer",
                )
            for row in reader:
                yield reader.line_num, {k: (v or "") for k, v in row.items() if k}
        except csv.Error as exc:
            raise EvalFileError(
                f"{path}: line {reader.line_num}: not readable CSV ({exc})"
            ) from None


def _simpleqa_meta(raw: str) -> dict[str, str]:
    """The topic and answer type from SimpleQA's ``metadata`` cell (a Python dict literal in
    the published file, read as a literal only; anything else is kept as it is)."""
    if not raw.strip():
        return {}
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {"metadata": raw[:500]}
    if not isinstance(value, dict):
        return {"metadata": raw[:500]}
    return {k: str(value[k]) for k in ("topic", "answer_type") if k in value}


def read_simpleqa(path: Path) -> list[Question]:
    questions = []
    for row_number, (line, row) in enumerate(_csv_rows(path), 1):
        text = (row.get("problem") or row.get("question") or "").strip()
        answer = row.get("answer", "").strip()
        if not text or not answer:
            missing = "problem" if not text else "answer"
            raise EvalFileError(
                f"{path}: line {line}: the {missing} is empty",
                fix="every row needs a problem and its answer",
            )
        meta = _simpleqa_meta(row.get("metadata", ""))
        questions.append(Question(f"row-{row_number}", text, (answer,), (), meta))
    return questions


# -- HotpotQA ---------------------------------------------------------------------------


def _pairs(value: Any, keys: tuple[str, str]) -> list[tuple[Any, Any]]:
    """``[[a, b], ...]`` (the original files) or ``{keys[0]: [...], keys[1]: [...]}`` (the
    dataset viewer's form) as a list of pairs."""
    if isinstance(value, dict):
        return list(zip(value.get(keys[0]) or [], value.get(keys[1]) or [], strict=False))
    if isinstance(value, list) and all(isinstance(p, list | tuple) and len(p) == 2 for p in value):
        return [(p[0], p[1]) for p in value]
    raise ValueError(f"is neither [[{keys[0]}, {keys[1]}], ...] nor a dict of two lists")


class _HotpotRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str = Field(validation_alias="_id")
    question: str
    answer: str
    supporting_facts: Any = Field(default_factory=list)
    context: Any
    type: str | None = None
    level: str | None = None


def _hotpot_record(value: Any) -> _HotpotRecord:
    if isinstance(value, dict) and "_id" not in value and "id" in value:
        value = {**value, "_id": value["id"]}
    return _HotpotRecord.model_validate(value)


def _hotpot_records(path: Path) -> list[Any]:
    with reading(path):
        text = path.read_bytes().decode("utf-8-sig")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalFileError(
            f"{path}: line {exc.lineno}: not JSON ({exc.msg})",
            fix="HotpotQA's files are one JSON list; a .jsonl of questions is read as JSON lines",
        ) from None
    if not isinstance(data, list):
        raise EvalFileError(
            f"{path}: the top level is not a list of records",
            fix="give HotpotQA's dev or train file (e.g. hotpot_dev_distractor_v1.json)",
        )
    return data


def read_hotpotqa(path: Path, corpus: _Corpus, notes: list[str]) -> list[Question]:
    questions = []
    for number, value in enumerate(_hotpot_records(path), 1):
        where = f"record {number}"
        try:
            record = _hotpot_record(value)
            context = _pairs(record.context, ("title", "sentences"))
            facts = _pairs(record.supporting_facts, ("title", "sent_id"))
        except (ValidationError, ValueError) as exc:
            problem = pydantic_problem(exc) if isinstance(exc, ValidationError) else str(exc)
            fix = (
                "the test file of HotpotQA carries no answers: use the dev (distractor) file"
                if "answer" in problem
                else "each record has _id, question, answer, supporting_facts and context"
            )
            raise EvalFileError(f"{path}: {where}: {problem}", fix=fix) from None
        paragraphs: dict[str, list[str]] = {}
        for title, sentences in context:
            lines = [str(s) for s in sentences] if isinstance(sentences, list) else [str(sentences)]
            paragraphs[str(title)] = lines
            text = "".join(lines).strip()
            if text:
                corpus.add(CorpusDocument(str(title), str(title), text), f"{where} ({record.id})")
        evidence = []
        for title, sent_id in facts:
            lines = paragraphs.get(str(title), [])
            if not isinstance(sent_id, int) or not 0 <= sent_id < len(lines):
                notes.append(
                    f"{where} ({record.id}): supporting fact [{title!r}, {sent_id}] is not in "
                    "its context; left out of the gold evidence"
                )
                continue
            evidence.append(lines[sent_id].strip())
        meta = _meta({"type": record.type, "level": record.level})
        questions.append(
            Question(record.id, record.question.strip(), (record.answer,), tuple(evidence), meta)
        )
    return questions


# -- the dispatch -------------------------------------------------------------------------


def read_folder_set(path: Path, corpus: _Corpus) -> list[Question]:
    found = [path / name for name in QUESTION_FILES if (path / name).is_file()]
    if not found:
        raise EvalFileError(
            f"{path}: no questions.jsonl or questions.csv in this folder",
            fix="put the questions in questions.jsonl (see docs/evals.md) beside the documents",
        )
    if len(found) > 1:
        raise EvalFileError(
            f"{path}: both questions.jsonl and questions.csv", fix="keep only one of them"
        )
    questions_file = found[0]
    if questions_file.suffix == ".csv":
        questions = read_simpleqa(questions_file)
    else:
        questions = read_questions_jsonl(questions_file, corpus)
    for doc in read_folder(path, skip=[questions_file]):
        corpus.add(doc, doc.id)
    return questions


def load_set(path: Path, fmt: SetFormat | None = None) -> QuestionSet:
    """Read the set at ``path`` (its format from the path unless ``fmt`` says)."""
    fmt = fmt or format_of(path)
    corpus = _Corpus(path)
    notes: list[str] = []
    readers: dict[SetFormat, Callable[[], Sequence[Question]]] = {
        "simpleqa": lambda: read_simpleqa(path),
        "jsonl": lambda: read_questions_jsonl(path, corpus),
        "hotpotqa": lambda: read_hotpotqa(path, corpus, notes),
        "folder": lambda: read_folder_set(path, corpus),
    }
    questions = list(readers[fmt]())
    if not questions:
        raise EvalFileError(f"{path}: no questions", fix="add at least one question")
    check_unique(questions, path)
    name = path.name if path.is_dir() else path.stem
    return QuestionSet(
        name=name,
        path=path,
        format=fmt,
        questions=tuple(questions),
        documents=tuple(corpus.documents.values()),
        fingerprint=_fingerprint(path),
        notes=tuple(notes),
    )


def _fingerprint(path: Path) -> str:
    if not path.is_dir():
        return fingerprint([path], path)
    files = folder_files(path) + [path / n for n in QUESTION_FILES if (path / n).is_file()]
    return fingerprint(set(files), path)
