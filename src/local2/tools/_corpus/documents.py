"""A corpus's documents, read from a folder or a JSON lines file (never downloaded).

On disk a corpus is either

- **a folder**: every ``.md`` and ``.txt`` file under it, in sorted order (hidden files and
  folders skipped) is one document; its id is its path under the folder without the suffix
  (``harbours/saltmere``), its title the file's first line when that is a Markdown heading,
  else the file's name;
- **a ``.jsonl`` file**: one document per line, ``{"id": "...", "text": "...", "title": "..."}``
  (``title`` optional; blank lines skipped).

Question sets that carry their documents (HotpotQA's paragraphs, a folder set) produce the
same :class:`CorpusDocument` records, and :func:`write_documents` stores them as a ``.jsonl``
corpus that a session can be pointed at.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from local2.errors import EvalFileError

DOCUMENT_SUFFIXES = (".md", ".txt")
MAX_DOCUMENT_BYTES = 20_000_000  # one document; a corpus of books belongs in smaller files
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>\S.*?)\s*#*\s*$")
_NOT_NAME = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class CorpusDocument:
    """One document of a corpus: ``id`` is unique within it and names it in its URL."""

    id: str
    title: str
    text: str


class _DocumentLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | int
    text: str
    title: str = ""

    @field_validator("text")
    @classmethod
    def _has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text is empty")
        return value


def corpus_name(path: Path) -> str:
    """The name a corpus goes by in its URLs: its folder's or file's name, lower-case, with
    every run of other characters as one ``-`` (``HotpotQA dev.json`` -> ``hotpotqa-dev``)."""
    stem = path.name if path.is_dir() else path.stem
    return _NOT_NAME.sub("-", stem.lower()).strip("-") or "corpus"


@contextmanager
def reading(path: Path, fix: str = "save it as UTF-8") -> Iterator[None]:
    """Reading ``path`` inside: a file that is not UTF-8 or cannot be read becomes an error
    naming it (and ``fix``)."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise EvalFileError(f"{path}: not UTF-8 text (byte {exc.start})", fix=fix) from None
    except OSError as exc:
        raise EvalFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _file_text(path: Path) -> str:
    with reading(path, "save it as UTF-8, or move it out of the corpus folder"):
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise EvalFileError(
                f"{path}: {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit of one "
                "document",
                fix="split it into smaller files",
            )
        return path.read_bytes().decode("utf-8-sig")


def folder_files(folder: Path, skip: Iterable[Path] = ()) -> list[Path]:
    """The document files under ``folder`` in a stable order, hidden ones and ``skip`` left out."""
    left_out = {p.resolve() for p in skip}
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root, name)
            if name.startswith(".") or path.suffix.lower() not in DOCUMENT_SUFFIXES:
                continue
            if path.resolve() not in left_out:
                found.append(path)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def document_from_file(path: Path, folder: Path) -> CorpusDocument:
    """A file as a document: id from its path under ``folder``, title from its heading."""
    text = _file_text(path)
    first = next((line for line in text.splitlines() if line.strip()), "")
    heading = _HEADING.match(first.strip())
    title = heading.group("title") if heading else path.stem.replace("_", " ")
    return CorpusDocument(path.relative_to(folder).with_suffix("").as_posix(), title, text)


def read_folder(folder: Path, skip: Iterable[Path] = ()) -> list[CorpusDocument]:
    """Every ``.md``/``.txt`` file under ``folder`` as a document (empty files left out)."""
    documents = [document_from_file(p, folder) for p in folder_files(folder, skip)]
    return [d for d in documents if d.text.strip()]


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """``(line number, value)`` for each non-blank line of a JSON lines file; a line that is
    not JSON, or a file that is not UTF-8, is an error naming the file and the line."""
    with reading(path), path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise EvalFileError(
                    f"{path}: line {number}, column {exc.colno}: not JSON ({exc.msg})",
                    fix="each line must be one JSON object; a value cannot span lines",
                ) from None
            yield number, value


def pydantic_problem(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``field: message``."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return f"unknown key '{where}'"
    if err["type"] == "missing":
        return f"no '{where}'"
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def read_jsonl(path: Path) -> list[CorpusDocument]:
    """A ``.jsonl`` corpus: one ``{id, text, title?}`` object per line."""
    documents = []
    seen: dict[str, int] = {}
    for number, value in json_lines(path):
        try:
            row = _DocumentLine.model_validate(value)
        except ValidationError as exc:
            raise EvalFileError(
                f"{path}: line {number}: {pydantic_problem(exc)}",
                fix='each line is {"id": "...", "text": "...", "title": "..."} (title optional)',
            ) from None
        doc_id = str(row.id).strip()
        if not doc_id:
            raise EvalFileError(f"{path}: line {number}: the id is empty", fix="give it an id")
        if doc_id in seen:
            raise EvalFileError(
                f"{path}: line {number}: id '{doc_id}' was already used on line {seen[doc_id]}",
                fix="give each document its own id",
            )
        seen[doc_id] = number
        documents.append(CorpusDocument(doc_id, row.title.strip() or doc_id, row.text))
    return documents


def load_documents(path: Path) -> list[CorpusDocument]:
    """The documents of a corpus folder or ``.jsonl`` file; a clear error for anything else."""
    path = Path(path).expanduser()
    if path.is_dir():
        documents = read_folder(path)
        what = f"no .md or .txt file with text under {path}"
    elif path.is_file() and path.suffix.lower() == ".jsonl":
        documents = read_jsonl(path)
        what = f"{path}: no documents"
    elif path.exists():
        raise EvalFileError(
            f"{path}: a corpus is a folder of .md/.txt files or a .jsonl file",
            fix='point web.search.corpus_path at such a folder or file ({"id", "text", "title"})',
        )
    else:
        raise EvalFileError(f"{path}: no such file or folder", fix="check the corpus path")
    if not documents:
        raise EvalFileError(what, fix="add documents to the corpus")
    return documents


def write_documents(documents: Iterable[CorpusDocument], path: Path) -> Path:
    """Store ``documents`` as a ``.jsonl`` corpus at ``path`` (written whole, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for doc in documents:
                row = {"id": doc.id, "title": doc.title, "text": doc.text}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def signature(path: Path) -> tuple[object, ...]:
    """What changes when a corpus's files do: names, sizes and modification times."""
    path = Path(path).expanduser().resolve()
    files = folder_files(path) if path.is_dir() else [path]
    stats = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        stats.append((str(file), info.st_size, info.st_mtime_ns))
    return (str(path), *stats)
