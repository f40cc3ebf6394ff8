"""The sandbox the file tools live in: which files under which folders may be read.

Deny by default. A path the model gives is relative to one of the configured roots; an
absolute path, a ``~`` path, ``..``, a hidden component (``.env``, ``.ssh/``), a file type
not on the allow-list, a symlink resolving outside its root, a file over the size cap and
a binary file are all refused with a typed error the model can read (``PATH_DENIED: ...``).
Every check runs on the *resolved* path too, so a symlink cannot smuggle a hidden or
foreign file in. Files are shown as ``<root name>/<path in root>`` (``notes/budget.md``).

Documents (PDF, DOCX, PPTX, ODT, EPUB, HTML: :data:`DOCUMENT_SUFFIXES`) are files like any
other here, under their own size cap (``documents.max_bytes``); their text is read by the
document worker (:mod:`local2.files._reading`), never decoded as text.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from charset_normalizer import from_bytes

from local2.errors import SandboxError

if TYPE_CHECKING:
    from local2.config import Settings

log = logging.getLogger(__name__)

PATH_DENIED = "PATH_DENIED"
FILE_NOT_FOUND = "FILE_NOT_FOUND"
AMBIGUOUS_PATH = "AMBIGUOUS_PATH"
FILE_TOO_LARGE = "FILE_TOO_LARGE"
NOT_TEXT = "NOT_TEXT"
UNREADABLE = "UNREADABLE"  # a document its reader refused (encrypted, damaged, over a limit)

# Files read as documents (by their reader, page by page) rather than decoded as text.
DOCUMENT_SUFFIXES = frozenset({".pdf", ".docx", ".pptx", ".odt", ".epub", ".html", ".htm"})

MAX_WALK_FILES = 50_000  # a root that is someone's whole disk must not hang a tool call
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # file://..., C:\..., smb:...


@dataclass(frozen=True)
class Root:
    """An allowed folder: its label (the configured folder's name) and its real path."""

    label: str
    path: Path


@dataclass(frozen=True)
class FileRef:
    """An allowed file: its root, its real path and its path inside the root."""

    root: Root
    path: Path
    rel: PurePosixPath

    @property
    def display(self) -> str:
        return f"{self.root.label}/{self.rel}"


def file_id(path: Path) -> str:
    """The id a file's chunks share in an index (``file_id`` in their metadata)."""
    return hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:16]


def _labels(paths: Sequence[Path]) -> list[str]:
    """Root labels: folder names, made unique with ``-2``, ``-3`` when two roots share one."""
    seen: dict[str, int] = {}
    labels = []
    for path in paths:
        name = path.name or "root"
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return labels


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} MB"  # pragma: no cover


class Sandbox:
    """Resolve, check and read files under the allowed roots."""

    def __init__(
        self,
        roots: Sequence[Path],
        extensions: Sequence[str],
        max_bytes: int,
        document_max_bytes: int | None = None,
    ):
        configured = [Path(os.path.expanduser(str(r))) for r in roots]
        self.roots: list[Root] = []
        for label, path in zip(_labels(configured), configured, strict=True):
            real = Path(os.path.realpath(path))  # a root given as a symlink is its target
            if not real.is_dir():
                log.warning("files: root %s is not a folder; ignored", path)
                continue
            self.roots.append(Root(label, real))
        self.extensions = frozenset(e.lower() for e in extensions)
        self.max_bytes = max_bytes
        self.document_max_bytes = document_max_bytes or max_bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> Sandbox:
        f = settings.files
        return cls(f.roots, f.extensions, f.max_bytes, settings.documents.max_bytes)

    @classmethod
    def of_root(cls, root: Root, settings: Settings) -> Sandbox:
        """A sandbox of the one folder ``root`` (a person's own documents)."""
        sandbox = cls([], settings.files.extensions, settings.files.max_bytes)
        sandbox.document_max_bytes = settings.documents.max_bytes
        sandbox.roots = [root]
        return sandbox

    def with_root(self, root: Root | None) -> Sandbox:
        """This sandbox and ``root`` besides (None: this one), its label kept apart from
        the configured folders' (``my-documents-2`` if one is called so)."""
        if root is None:
            return self
        taken = {r.label for r in self.roots}
        label, n = root.label, 1
        while label in taken:
            n += 1
            label = f"{root.label}-{n}"
        wider = copy.copy(self)
        wider.roots = [*self.roots, Root(label, root.path)]
        return wider

    @staticmethod
    def is_document(ref: FileRef) -> bool:
        """Whether the file is read by a document reader rather than decoded as text."""
        return ref.rel.suffix.lower() in DOCUMENT_SUFFIXES

    def cap_for(self, ref: FileRef) -> int:
        return self.document_max_bytes if self.is_document(ref) else self.max_bytes

    # -- policy ----------------------------------------------------------------------------

    def _allowed_name(self, parts: Sequence[str]) -> str | None:
        """Why these path parts are refused (``None``: they are fine)."""
        if any(p.startswith(".") for p in parts):
            return "hidden files and folders are not allowed"
        suffix = PurePosixPath(parts[-1]).suffix.lower() if parts else ""
        if suffix not in self.extensions:
            kind = f"file type '{suffix}'" if suffix else "files without an extension"
            return f"{kind} is not allowed (allowed: {', '.join(sorted(self.extensions))})"
        return None

    def _parts(self, requested: str) -> tuple[str, ...]:
        """The checked parts of a requested path, or :class:`SandboxError` ``PATH_DENIED``."""
        raw = requested.strip()
        if "\x00" in raw:
            raise SandboxError(PATH_DENIED, "the path contains a NUL character")
        text = raw.replace("\\", "/")
        if text.startswith(("/", "~")) or _SCHEME.match(text):
            raise SandboxError(
                PATH_DENIED,
                f"{raw}: absolute paths are not allowed; give a path inside the allowed "
                f"folders ({self._root_names()}), e.g. from list_files",
            )
        parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
        if ".." in parts:
            raise SandboxError(PATH_DENIED, f"{raw}: path traversal (..) is not allowed")
        if not parts:
            raise SandboxError(PATH_DENIED, f"{raw!r} is not a file path")
        why = self._allowed_name(parts)
        if why:
            raise SandboxError(PATH_DENIED, f"{raw}: {why}")
        return parts

    def _root_names(self) -> str:
        return ", ".join(f"{r.label}/" for r in self.roots) or "none configured"

    def admit(self, root: Root, candidate: Path) -> FileRef | None:
        """The file at ``candidate`` if the policy allows it (after resolving symlinks)."""
        real = Path(os.path.realpath(candidate))
        if not real.is_relative_to(root.path) or real == root.path:
            return None
        rel = PurePosixPath(real.relative_to(root.path).as_posix())
        if self._allowed_name(rel.parts) is not None or not real.is_file():
            return None
        return FileRef(root, real, rel)

    # -- resolution ------------------------------------------------------------------------

    def resolve(self, requested: str) -> FileRef:
        """The one allowed file ``requested`` names, or a typed :class:`SandboxError`."""
        parts = self._parts(requested)
        tries: list[tuple[Root, Path]] = []
        by_label = {r.label: r for r in self.roots}
        if len(parts) > 1 and parts[0] in by_label:
            tries.append((by_label[parts[0]], by_label[parts[0]].path.joinpath(*parts[1:])))
        tries += [(r, r.path.joinpath(*parts)) for r in self.roots]
        found: dict[Path, FileRef] = {}
        denied = False
        for root, candidate in tries:
            if not os.path.lexists(candidate):
                continue
            ref = self.admit(root, candidate)
            if ref is None:
                denied = denied or not Path(os.path.realpath(candidate)).is_dir()
                continue
            found.setdefault(ref.path, ref)
        if not found and denied:
            raise SandboxError(
                PATH_DENIED,
                f"{requested}: resolves outside the allowed folders or to a "
                "file that is not allowed (symlink)",
            )
        if not found and len(parts) == 1:
            for ref in self.walk():
                if ref.rel.name == parts[0]:
                    found.setdefault(ref.path, ref)
        if not found:
            raise SandboxError(
                FILE_NOT_FOUND,
                f"no file '{requested}' in the allowed folders ({self._root_names()}); "
                "use list_files or search_files to find it",
            )
        if len(found) > 1:
            names = sorted(r.display for r in found.values())
            shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
            raise SandboxError(
                AMBIGUOUS_PATH,
                f"'{requested}' matches {len(names)} files: {shown}; give one of these paths",
            )
        return next(iter(found.values()))

    def walk(self) -> Iterator[FileRef]:
        """Every allowed file under every root, in a stable order, each once."""
        seen: set[Path] = set()
        count = 0
        for root in self.roots:
            for dirpath, dirnames, filenames in os.walk(root.path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith(".") or Path(name).suffix.lower() not in self.extensions:
                        continue
                    ref = self.admit(root, Path(dirpath, name))
                    if ref is None or ref.path in seen:
                        continue
                    seen.add(ref.path)
                    yield ref
                    count += 1
                    if count >= MAX_WALK_FILES:
                        log.warning("files: stopped listing after %d files", count)
                        return

    # -- reading ---------------------------------------------------------------------------

    def read_bytes(self, ref: FileRef) -> bytes:
        """The file's bytes, or ``FILE_TOO_LARGE`` over the cap (checked before reading)."""
        size = ref.path.stat().st_size
        cap = self.cap_for(ref)
        if size > cap:
            raise self._too_large(ref, size, cap)
        with ref.path.open("rb") as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:  # grew since stat
            raise self._too_large(ref, len(data), cap)
        return data

    def _too_large(self, ref: FileRef, size: int, cap: int) -> SandboxError:
        return SandboxError(
            FILE_TOO_LARGE,
            f"{ref.display} is {human_size(size)}, over the {human_size(cap)} limit; "
            "use grep_files or search_files to find the part you need",
        )

    def decode(self, ref: FileRef, data: bytes) -> str:
        """The file as text, or ``NOT_TEXT`` for binary content."""
        text = decode_text(data)
        if text is None:
            raise SandboxError(NOT_TEXT, f"{ref.display} is not a text file")
        return text

    def read_text(self, ref: FileRef) -> tuple[str, bytes]:
        data = self.read_bytes(ref)
        return self.decode(ref, data), data


def decode_text(data: bytes) -> str | None:
    """UTF-8 (with or without BOM), else the encoding charset-normalizer finds; binary: None."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass

    best = from_bytes(data).best()
    return None if best is None else str(best)
