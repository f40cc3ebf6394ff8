"""Documents built to hurt a reader, made in a moment at test time (nothing stored).

A PDF whose one content stream inflates to gigabytes (a megabyte of deflate whose blocks
repeat), 100,000 pages, objects nested 100,000 deep, zip bombs dressed as DOCX and EPUB,
and an encrypted PDF; ``truncated`` cuts any file short.
"""

from __future__ import annotations

import io
import struct
import zlib

_MB = 1024 * 1024


def raw_pdf(objects: list[bytes], trailer: bytes = b"") -> bytes:
    """A PDF of ``objects`` (numbered from 1; the first is the catalog) with its xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        trailer,
        xref,
    )
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n%s\nendstream" % (len(data), extra, data)


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _one_page(contents: bytes, page_extra: bytes = b"", catalog_extra: bytes = b"") -> bytes:
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R %s>>" % catalog_extra,
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> %s>>" % page_extra,
            contents,
            _FONT,
        ]
    )


def repeated_deflate(first: bytes, megabytes: int, wbits: int = zlib.MAX_WBITS) -> bytes:
    """A deflate stream of ``first`` then ``megabytes`` MiB of spaces, in about 1 KB per MiB.

    Each MiB is compressed once after a full flush (which resets the window), so the same
    bytes may simply repeat; the checksum at the end is wrong, found only after inflating.
    """
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    head = packer.compress(first) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(b" " * _MB) + packer.flush(zlib.Z_FULL_FLUSH)
    return head + block * megabytes + packer.flush()


def inflating_pdf(gigabytes: int = 2) -> bytes:
    """One page whose content stream is ~2 MB of deflate inflating to ``gigabytes`` GiB."""
    text = b"BT /F1 12 Tf 72 720 Td (Hello from the bomb) Tj ET\n"
    data = repeated_deflate(text, gigabytes * 1024)
    return _one_page(_stream(data, b"/Filter /FlateDecode "))


def many_pages_pdf(pages: int = 100_000) -> bytes:
    """``pages`` pages sharing one small content stream (12 MB for 100,000)."""
    kids = b" ".join(b"%d 0 R" % (n + 4) for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _stream(b"BT /F1 12 Tf 72 720 Td (page) Tj ET"),
    ]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>"] * pages
    return raw_pdf(objects)


def nested_pdf(depth: int = 100_000) -> bytes:
    """Arrays and dictionaries nested ``depth`` deep in the catalog and the page, and a
    content stream of ``depth`` unbalanced saves of the graphics state."""
    arrays = b"[" * depth + b"]" * depth
    dicts = b"<< /A " * depth + b">>" * depth
    contents = _stream(b"BT /F1 12 Tf 72 720 Td (Nested text) Tj ET " + b"q " * depth)
    return _one_page(contents, b"/Z " + dicts + b" ", b"/X " + arrays + b" ")


def encrypted_pdf(password: str = "kelsby") -> bytes:
    """A one-page PDF that needs ``password`` to open (reportlab's standard encryption)."""
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, encrypt=StandardEncryption(password, canPrint=0))
    c.drawString(72, 720, "A secret about the harbour.")
    c.showPage()
    c.save()
    return out.getvalue()


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    """The first ``keep`` of ``data``, as a download cut short."""
    return data[: int(len(data) * keep)]


# -- zip bombs --------------------------------------------------------------------------------


def _zip(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip of (name, packed bytes, method, declared size, crc) members, written by hand so
    a member's packed data and declared size can be anything."""
    out = bytearray()
    central = bytearray()
    for name, packed, method, size, crc in members:
        encoded = name.encode()
        offset = len(out)
        out += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(packed), size, len(encoded), 0
        )
        out += encoded + packed
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50, 20, 20, 0, method, 0, 0, crc, len(packed), size,
            len(encoded), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        central += encoded
    start = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                       len(central), start, 0)  # fmt: skip
    return bytes(out)


def _stored(name: str, data: bytes) -> tuple[str, bytes, int, int, int]:
    return name, data, 0, len(data), zlib.crc32(data)


def _bomb_member(
    name: str, megabytes: int, declared: int | None = None
) -> tuple[str, bytes, int, int, int]:
    packed = repeated_deflate(b"<x>", megabytes, wbits=-zlib.MAX_WBITS)
    crc = 0
    for piece in (b"<x>", *([b" " * _MB] * megabytes)):
        crc = zlib.crc32(piece, crc)
    size = len(b"<x>") + megabytes * _MB if declared is None else declared
    return name, packed, 8, size, crc


_CONTENT_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'content-types"/>'
)


def docx_bomb(megabytes: int = 1024, declared: int | None = None) -> bytes:
    """A DOCX whose word/document.xml inflates to ``megabytes`` MiB (declared as such, or
    as ``declared`` bytes: a lying size)."""
    return _zip(
        [
            _stored("[Content_Types].xml", _CONTENT_TYPES),
            _bomb_member("word/document.xml", megabytes, declared),
        ]
    )


def epub_bomb(megabytes: int = 1024) -> bytes:
    """An EPUB whose one chapter inflates to ``megabytes`` MiB."""
    container = (
        b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        b'xmlns:container"><rootfiles><rootfile full-path="book.opf" media-type="application/'
        b'oebps-package+xml"/></rootfiles></container>'
    )
    opf = (
        b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        b'<manifest><item id="c" href="ch.xhtml" media-type="application/xhtml+xml"/>'
        b'</manifest><spine><itemref idref="c"/></spine></package>'
    )
    return _zip(
        [
            _stored("mimetype", b"application/epub+zip"),
            _stored("META-INF/container.xml", container),
            _stored("book.opf", opf),
            _bomb_member("ch.xhtml", megabytes),
        ]
    )


def many_members_docx(members: int = 20_000) -> bytes:
    """A DOCX of ``members`` tiny entries (a central directory bomb)."""
    entries = [_stored("[Content_Types].xml", _CONTENT_TYPES)]
    entries += [_stored(f"word/media/p{n}.xml", b"<x/>") for n in range(members)]
    return _zip(entries)
