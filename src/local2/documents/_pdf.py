"""PDF: pypdfium2 (Apache-2.0/BSD, Google's PDFium) reads the text layer, page by page.

Chosen by ``bench/documents.py``: on our generated corpus it had the best text quality and
was the fastest of pypdfium2, pypdf and pdfminer.six (PyMuPDF is AGPL). PDFium joins a word
hyphenated at a line end (marking the join with U+0002, dropped here with the other control
characters) and maps ligatures to their letters. PDFium is not thread-safe, which does not
matter here: each worker process reads one document at a time.

PDFium gives text in the order the file draws it; a page whose columns are drawn out of
reading order is read region by region in the order :mod:`local2.documents._layout` finds
(about 0.5 ms a page to look, a few ms more to reorder; ``bench/documents.py``).

A page with no text but something drawn on it (a scan, outlined text) is read by OCR when
the engine is installed (:mod:`local2.documents._ocr`), else reported in ``no_text_pages``.
"""

from __future__ import annotations

import ctypes
import unicodedata
from typing import Any

from local2.documents._extract import clean_text
from local2.documents._layout import Box, reading_regions
from local2.documents._model import Document, Limits
from local2.documents._ocr import INSTALL_HINT, PageOcr
from local2.documents._pages import PageBuilder, check_page_count
from local2.documents._problems import corrupt, encrypted
from local2.errors import OcrUnavailable

_LIGATURES = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_FOLD = str.maketrans({**_LIGATURES, "\ufffe": ""})  # U+FFFE: PDFium's hyphen join, by range
PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD
SECURITY_ERROR = 5  # FPDF_ERR_SECURITY: an encryption scheme PDFium does not support
_LAYOUT_MIN_CHARS = 200  # shorter pages are read as drawn (a heading, a few lines)
_LOAD_ERRORS = {3: "PDFium finds its structure damaged, or it is not a PDF"}  # FPDF_ERR_FORMAT


def page_text(raw: str) -> str:
    """PDFium's page text cleaned: CRLF lines, hyphenation marks and ligatures undone."""
    return clean_text(raw.translate(_FOLD))


def open_pdf(data: bytes) -> Any:
    # pypdfium2: 60 modules at import, only in the reading worker
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (PASSWORD_ERROR, SECURITY_ERROR):
            raise encrypted("pdf") from None
        detail = _LOAD_ERRORS.get(code, str(exc)) if isinstance(code, int) else str(exc)
        raise corrupt("pdf", detail) from None


def read_in_order(textpage: Any) -> str:
    """The page's text, its columns read one after another (:mod:`local2.documents._layout`)."""
    raw = textpage.get_text_bounded()
    if len(raw) < _LAYOUT_MIN_CHARS:
        return str(raw)
    try:
        regions = reading_regions(_text_rects(textpage), right_to_left=_mostly_rtl(raw))
        return str(raw) if regions is None else _text_by_regions(textpage, regions)
    except (ArithmeticError, LookupError, ValueError):  # odd boxes (NaN, huge): as drawn
        return str(raw)


def _mostly_rtl(text: str) -> bool:
    """Most letters are of a script written right to left (Hebrew, Arabic, Syriac, Thaana)."""
    letters = [c for c in text if c.isalpha()]
    rtl = sum(1 for c in letters if unicodedata.bidirectional(c) in ("R", "AL"))
    return rtl * 2 > len(letters)


def _raw() -> Any:
    """PDFium's C functions (imported where used: only the reading worker needs them)."""
    # pypdfium2: 60 modules at import, only in the reading worker
    import pypdfium2.raw as pdfium_c

    return pdfium_c


def _text_rects(textpage: Any) -> list[Box]:
    pdfium_c = _raw()
    count = textpage.count_rects()
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    rects: list[Box] = []
    for index in range(count):
        if pdfium_c.FPDFText_GetRect(textpage.raw, index, left, top, right, bottom):
            rects.append((left.value, bottom.value, right.value, top.value))
    return rects


def _text_by_regions(textpage: Any, regions: list[Box]) -> str:
    """Each region's text, the regions in ``regions``' order.

    A character belongs to the region its box's centre is in; one with no box (a space or
    line break PDFium inserted) or outside every region goes with the character before it.
    Within a region, PDFium's runs of characters are read top to bottom (a running head
    drawn last still opens its column).
    """
    pdfium_c = _raw()
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    runs: list[list[tuple[float, int, int]]] = [[] for _ in regions]  # (-y, start, count)
    current, start, first_y = 0, 0, None
    count = textpage.count_chars()
    for index in range(count + 1):
        region, y = current, None
        boxed = index < count and pdfium_c.FPDFText_GetCharBox(
            textpage.raw, index, left, right, bottom, top
        )
        if boxed and right.value > left.value and top.value > bottom.value:
            y = (bottom.value + top.value) / 2
            region = _region_at(regions, (left.value + right.value) / 2, y, current)
        if region != current or index == count:
            if index > start:
                runs[current].append((-(first_y or 0.0), start, index - start))
            current, start, first_y = region, index, None
        if first_y is None:
            first_y = y
    texts = ["\n".join(textpage.get_text_range(a, n) for _, a, n in sorted(r)) for r in runs]
    return "\n".join(t for t in texts if t)


def _region_at(regions: list[Box], x: float, y: float, default: int) -> int:
    for n, (left, bottom, right, top) in enumerate(regions):
        if left <= x <= right and bottom <= y <= top:
            return n
    return default


def _has_drawing(page: Any) -> bool:
    return bool(_raw().FPDFPage_CountObjects(page.raw) > 0)


def read_pdf(data: bytes, limits: Limits, ocr: PageOcr | None = None) -> Document:
    """Every page's text; pages without a text layer read by ``ocr`` when it is given."""
    pdf = open_pdf(data)
    try:
        count = len(pdf)
        check_page_count(count, "pdf", limits)
        texts: list[str] = []
        blank: list[int] = []
        for index in range(count):
            page = pdf[index]
            textpage = page.get_textpage()
            text = page_text(read_in_order(textpage))
            if not text.strip() and _has_drawing(page):
                blank.append(index + 1)
            textpage.close()
            page.close()
            texts.append(text)
        read, notes = _ocr_pages(pdf, blank, limits, ocr)
        out = PageBuilder("pdf", limits)
        for number, text in enumerate(texts, start=1):
            if number in read:
                out.add_page(read[number], ocr=True)
            else:
                out.add_page(text)
        title = clean_text(pdf.get_metadata_value("Title") or "").strip()
    finally:
        pdf.close()
    unread = tuple(n for n in blank if n not in read)
    return Document("pdf", title, out.pages(), unread, tuple(notes))


def _ocr_pages(
    pdf: Any, blank: list[int], limits: Limits, ocr: PageOcr | None
) -> tuple[dict[int, str], list[str]]:
    """Text of the pages OCR read, and notes on the ones it did not."""
    if not blank:
        return {}, []
    listed = _page_list(blank)
    if ocr is None or not limits.ocr:
        why = "OCR is turned off (documents.ocr)" if not limits.ocr else INSTALL_HINT
        return {}, [f"No text layer on {listed} (scanned?). {why}"]
    read: dict[int, str] = {}
    notes: list[str] = []
    try:
        with ocr.room():
            for number in blank[: limits.ocr_max_pages]:
                page = pdf[number - 1]
                image = page.render(scale=limits.ocr_dpi / 72).to_numpy()
                page.close()
                read[number] = clean_text(ocr.read(image))
                del image
    except OcrUnavailable as exc:
        return read, [f"No text layer on {listed} (scanned?); OCR failed: {exc}. {INSTALL_HINT}"]
    except Exception as exc:  # the engine out of memory (onnxruntime's bad_alloc) or failing
        left = _page_list([n for n in blank if n not in read])
        return read, [
            f"No text layer on {left} (scanned?), and OCR failed on them ({type(exc).__name__}: "
            f"{_last_line(exc)}); documents.ocr_memory_mb or ocr_dpi "
            "may need changing."
        ]
    if len(blank) > limits.ocr_max_pages:
        rest = _page_list(blank[limits.ocr_max_pages :])
        notes.append(
            f"OCR read {limits.ocr_max_pages} pages with no text layer; {rest} were not read "
            "(documents.ocr_max_pages)."
        )
    return read, notes


def _page_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20])
    more = f" and {len(numbers) - 20} more" if len(numbers) > 20 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _last_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1][:200] if lines else ""
