"""Each document reader against documents made at test time whose text is known.

The documents are written by other libraries than the readers (reportlab, python-docx,
python-pptx, Pillow) or by hand after the format's spec (ODT, EPUB), and read through the
real bounded worker, as the server reads them.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from local2.config._schema import DocumentsSettings
from local2.documents._model import Document, Limits, guess_format
from local2.documents._ocr import INSTALL_HINT, ocr_installed
from local2.documents._pdf import read_pdf
from local2.documents._read import read_document
from local2.documents._word import read_docx
from local2_testkit import documents as corpus
from local2_testkit.documents import Sample

CFG = DocumentsSettings()


def words(text: str) -> str:
    """The text with its whitespace runs as single spaces (line wrapping is the layout's)."""
    return " ".join(text.split())


def read(sample: Sample, **cfg: object) -> Document:
    return read_document(sample.data, CFG.model_copy(update=cfg), name=sample.name)


def assert_pages(document: Document, sample: Sample) -> None:
    assert document.page_count == len(sample.pages)
    for page, written in zip(document.pages, sample.pages, strict=True):
        assert words(page.text) == words(written), f"page {page.number}"
    assert [p.number for p in document.pages] == list(range(1, len(sample.pages) + 1))


@pytest.mark.parametrize(
    "make",
    [
        corpus.one_column_pdf,
        corpus.two_column_pdf,
        corpus.table_pdf,
        corpus.footnotes_pdf,
        corpus.ligatures_pdf,
        corpus.scripts_pdf,
    ],
)
def test_pdf_text_is_read_page_by_page(make) -> None:
    sample = make()
    document = read(sample)
    assert document.format == "pdf" and document.unit == "page"
    assert_pages(document, sample)
    assert document.no_text_pages == () and document.notes == ()


def test_pdf_ligature_glyphs_come_back_as_letters() -> None:
    sample = corpus.ligatures_pdf()
    text = read(sample).text()
    assert "ﬁ" not in text and "ﬂ" not in text
    assert "field" in text or "flood" in text or "office" in text


def test_pdf_title_comes_from_its_metadata() -> None:
    assert read(corpus.one_column_pdf()).title == "One column"


def test_scanned_page_without_ocr_is_named_with_how_to_turn_ocr_on() -> None:
    sample = corpus.scanned_pdf()
    document = read_pdf(sample.data, Limits(), ocr=None)  # as when the extra is missing
    assert document.no_text_pages == (2,)
    assert document.pages[1].text == ""
    assert [words(p.text) for p in document.pages[::2]] == [words(t) for t in sample.pages[::2]]
    [note] = document.notes
    assert "No text layer on page 2" in note and INSTALL_HINT in note


def test_ocr_turned_off_says_so() -> None:
    document = read(corpus.scanned_pdf(), ocr=False)
    assert document.no_text_pages == (2,)
    assert "documents.ocr" in document.notes[0]


def test_blank_page_is_not_reported_as_scanned() -> None:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out)
    page.drawString(72, 720, "Only the first page has text.")
    page.showPage()
    page.showPage()  # nothing drawn at all
    page.save()
    document = read_document(out.getvalue(), CFG, name="blank.pdf")
    assert document.page_count == 2 and document.no_text_pages == () and document.notes == ()


@pytest.mark.skipif(not ocr_installed(), reason="the ocr extra is not installed")
def test_ocr_reads_the_scanned_page_when_installed() -> None:
    sample = corpus.scanned_pdf()
    document = read(sample)
    assert document.ocr_pages == (2,)
    assert document.no_text_pages == () and document.notes == ()
    assert words(document.pages[1].text) == words(sample.pages[1])
    assert not document.pages[0].ocr and words(document.pages[0].text) == words(sample.pages[0])


def test_docx_pages_break_where_the_author_broke_them() -> None:
    sample = corpus.docx_sample()
    document = read(sample)
    assert document.format == "docx" and document.title == "Harbour report"
    assert_pages(document, sample)
    assert "1894\tbuilt" in document.pages[0].text  # a table row, cells split by tabs


def _with_document_xml(data: bytes, body: str) -> bytes:
    """The DOCX ``data`` with its body replaced (Word's markup, written by hand)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "word/document.xml":
                content = f"<w:document {w}><w:body>{body}</w:body></w:document>".encode()
            target.writestr(info, content)
    return out.getvalue()


def test_docx_pages_as_word_last_laid_them_out() -> None:
    """Word records where it broke pages (w:lastRenderedPageBreak); those win over hard
    breaks, which Word also marks so, and deleted text and field codes are left out."""
    body = (
        "<w:p><w:r><w:t>One</w:t></w:r><w:r><w:delText>gone</w:delText></w:r></w:p>"
        "<w:p><w:r><w:t>Two </w:t><w:lastRenderedPageBreak/><w:t>three</w:t></w:r></w:p>"
        '<w:p><w:r><w:br w:type="page"/></w:r><w:r><w:lastRenderedPageBreak/>'
        "<w:instrText>PAGE</w:instrText><w:t>four</w:t></w:r></w:p>"
    )
    data = _with_document_xml(corpus.docx_sample().data, body)
    document = read_docx(data, Limits())
    assert [p.text for p in document.pages] == ["One\nTwo", "three", "four"]


def test_docx_hard_breaks_page_break_before_and_sections() -> None:
    body = (
        "<w:p><w:r><w:t>A</w:t></w:r></w:p>"
        "<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>B</w:t></w:r></w:p>"
        "<w:p><w:pPr><w:sectPr/></w:pPr><w:r><w:t>C</w:t></w:r></w:p>"
        '<w:p><w:pPr><w:sectPr><w:type w:val="continuous"/></w:sectPr></w:pPr>'
        "<w:r><w:t>D</w:t></w:r></w:p><w:p><w:r><w:t>E</w:t></w:r></w:p>"
    )
    document = read_docx(_with_document_xml(corpus.docx_sample().data, body), Limits())
    assert [p.text for p in document.pages] == ["A", "B\nC", "D\nE"]


def test_pptx_slides_are_pages_with_tables_and_notes() -> None:
    sample = corpus.pptx_sample()
    document = read(sample)
    assert document.format == "pptx" and document.unit == "slide"
    assert document.title == "Harbour slides"
    assert_pages(document, sample)


def test_odt_soft_page_breaks_spaces_tabs_tables_and_notes() -> None:
    sample = corpus.odt_sample()
    document = read(sample)
    assert document.format == "odt" and document.title == "Harbour notes"
    assert_pages(document, sample)
    assert "Cost:   forty\tpounds\npaid in 1894" in document.pages[0].text  # exact spacing


def test_odt_without_soft_breaks_breaks_at_styles_that_say_so() -> None:
    sample = corpus.odt_sample(soft_breaks=False)
    assert_pages(read(sample), sample)


def test_epub_chapters_in_spine_order() -> None:
    sample = corpus.epub_sample()
    document = read(sample)
    assert document.format == "epub" and document.unit == "chapter"
    assert document.title == "Harbour tales"
    assert_pages(document, sample)


def test_html_main_text_without_navigation() -> None:
    sample = corpus.html_sample()
    document = read(sample)
    assert document.title == "Kelsby harbour news"
    assert_pages(document, sample)
    assert "Home | News" not in document.text() and "Copyright" not in document.text()


def test_text_files_split_at_form_feeds() -> None:
    sample = corpus.text_sample()
    assert_pages(read(sample), sample)


def test_formats_are_told_by_content_before_names() -> None:
    pdf, odt, epub = corpus.one_column_pdf(), corpus.odt_sample(), corpus.epub_sample()
    docx, pptx = corpus.docx_sample(), corpus.pptx_sample()
    assert guess_format("notes.txt", "", pdf.data[:65536]) == "pdf"
    assert guess_format("", "", odt.data[:65536]) == "odt"
    assert guess_format("book.zip", "", epub.data[:65536]) == "epub"
    assert guess_format("", "", docx.data[:65536]) == "docx"
    assert guess_format("", "", pptx.data[:65536]) == "pptx"
    assert guess_format("page", "text/html; charset=utf-8", b"<p>x</p>") == "html"
    assert guess_format("a.md", "", b"# Notes") == "text"
    assert guess_format("fake.pdf", "", b"not a pdf at all") is None
    assert guess_format("photo.png", "image/png", b"\x89PNG\r\n") is None


def test_wire_round_trip_keeps_everything() -> None:
    document = read(corpus.scanned_pdf(), ocr=False)
    assert Document.from_wire(document.to_wire()) == document
