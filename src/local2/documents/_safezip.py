"""Zip containers (DOCX, PPTX, ODT, EPUB) opened with caps, so a zip bomb stays small.

CPython's zipfile has no size limit of its own, but read a chunk at a time it stops a
member's output at the size the central directory declares (then fails its CRC check). So
the caps are checked on the directory before anything is unpacked: the number of members,
the declared size of the parts that will be read, and the packing ratio of any large part;
only stored and deflated members are read (LZMA and BZIP2 are inflated without a bound
before that stop).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

from local2.documents._model import Format, Limits
from local2.documents._problems import archive, corrupt

_MB = 1024 * 1024
_CHUNK = _MB
RATIO_FLOOR = _MB  # smaller parts may pack as tightly as they like
READABLE = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})


class SafeZip:
    """A vetted zip file: read only what ``wanted`` names, within ``limits``."""

    def __init__(
        self, data: bytes, fmt: Format, limits: Limits, wanted: Callable[[str], bool]
    ) -> None:
        self.fmt = fmt
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, EOFError, ValueError) as exc:
            raise corrupt(fmt, f"not a zip file: {exc}") from None
        if len(infos) > limits.zip_max_members:
            raise archive(
                fmt,
                f"has {len(infos):,} entries, over {limits.zip_max_members:,}",
                "zip_max_members",
            )
        self.infos = {i.filename: i for i in infos if wanted(i.filename) and not i.is_dir()}
        total = 0
        for info in self.infos.values():
            if info.compress_type not in READABLE:
                raise archive(
                    fmt,
                    f"packs {info.filename!r} with method {info.compress_type}, "
                    "not stored or deflated",
                    "zip_max_ratio",
                )
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > RATIO_FLOOR and ratio > limits.zip_max_ratio:
                raise archive(
                    fmt,
                    f"packs {info.filename!r} {ratio:,.0f} to 1 (a zip bomb?), over "
                    f"{limits.zip_max_ratio}",
                    "zip_max_ratio",
                )
            total += info.file_size
        if total > limits.zip_max_unpacked_mb * _MB:
            raise archive(
                fmt,
                f"would unpack to {total / _MB:,.0f} MB of text, over "
                f"{limits.zip_max_unpacked_mb} MB",
                "zip_max_unpacked_mb",
            )

    def names(self) -> list[str]:
        return list(self.infos)

    def __contains__(self, name: str) -> bool:
        return name in self.infos

    def read(self, name: str) -> bytes:
        """One vetted member's bytes (``KeyError`` for one not vetted or not there).

        Read a chunk at a time: ``ZipFile.read`` inflates a member's whole stream in one
        call before cutting it at the declared size (2 GB and 9 s for a member that lies).
        """
        parts: list[bytes] = []
        try:
            with self.zip.open(self.infos[name]) as member:
                while chunk := member.read(_CHUNK):
                    parts.append(chunk)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise corrupt(self.fmt, f"{name}: {exc}") from None
        return b"".join(parts)

    def text_only_copy(self) -> bytes:
        """The same package with every part not vetted left empty, for a library that loads
        every part (python-pptx): media are never unpacked, and the names all still resolve."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
            for info in self.zip.infolist():
                if info.is_dir():
                    continue
                body = self.read(info.filename) if info.filename in self.infos else b""
                copy.writestr(info.filename, body)
        return out.getvalue()
