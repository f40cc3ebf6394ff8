"""The report itself exported as HTML, PDF and DOCX (issue 56), each read back by a reader of
its own: the HTML parsed (every citation a link to a reference's anchor), the PDF by the
project's own document reader (its citations, with the page of a document cited, and its
References) and pypdf (its links' destinations), the DOCX by python-docx (headings,
citations, the References, Word's internal links to their bookmarks).

The report is the one the research graph writes (``report_markdown``, with its escapes, its
retraction warning and its "Removed as unsupported" list), from the sources the reference
exports are tested on."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import docx
import pypdf
import pytest

from local2.config import load_settings
from local2.contracts import CitedSource, ResearchPayload
from local2.documents import read_document
from local2.errors import RunNotReady
from local2.references import _report_pdf, to_docx, to_html, to_pdf
from local2.research._state import Source
from local2.research._verify import Unsupported, Verified, report_markdown
from local2.service.research._exports import export_run
from tests.tools.test_references_export import sources

QUESTION = "Does attention <script>alert(1)</script> scale to long notes?"
BODY = (
    "Sparse attention scales to long clinical notes [1]. "
    "One trial was withdrawn [2] _(RETRACTED)_.\n\n"
    "- Costs fell by half [3]; [a trick](javascript:alert(1)) stays text.\n"
    "- Two sources agree [1, 4].\n\n"
    "Code is not a citation: `x[1]`."
)


def ledger() -> list[Source]:
    return [
        Source(
            n=s["n"],
            url=s["url"] + (f"#page={s['page']}" if s["page"] else ""),
            title=s["title"],
            text="",
            kind=s["kind"],
            found_at=0.0,
            read_at=s["read_at"],
            step="s1",
            page=s["page"],
            **({"meta": s["meta"]} if "meta" in s else {}),  # type: ignore[typeddict-item]
        )
        for s in sources()
    ]


def cited() -> list[CitedSource]:
    return [CitedSource(**{**s, "url": s["url"]}) for s in sources()]  # type: ignore[typeddict-item]


def report(body: str = BODY) -> str:
    unsupported = [Unsupported("Cats sleep twenty hours [5].", "no source says so", [5])]
    verified = Verified(body, unsupported, [1, 2, 3, 4], 5, [])
    return report_markdown(QUESTION, verified, ledger(), scope="Sources published since 2020.")


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.links: list[tuple[str, str, str]] = []  # href, class, text
        self.scripts = 0
        self._open: list[list[str]] = []
        self._id: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "script":
            self.scripts += 1
        if tag == "a":
            self._open.append([named.get("href", ""), named.get("class", ""), ""])
        if "id" in named:
            self._id, self._text = named["id"], []

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open:
            href, klass, text = self._open.pop()
            self.links.append((href, klass, text))
        if tag == "p" and self._id:
            self.ids[self._id] = "".join(self._text)
            self._id = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2] += data
        if self._id:
            self._text.append(data)


def test_html_links_each_citation_to_its_reference_and_keeps_the_page() -> None:
    page = to_html(report(), cited())
    parsed = _Anchors()
    parsed.feed(page)
    citations = [(href, text) for href, klass, text in parsed.links if klass == "citation"]
    assert citations, page
    for href, _text in citations:
        assert href.startswith("#") and href[1:] in parsed.ids, (href, sorted(parsed.ids))
    # [1] is a page of a document: its page goes with it, at the citation and its entry
    assert ("#ref-1", "[1, p. 3]") in citations and ("#ref-4", "[4]") in citations
    assert [t for h, t in citations if h == "#ref-1"].count("[1, p. 3]") == 2  # [1] and [1, 4]
    assert parsed.ids["ref-1"].startswith("[1] p. 3, Sparse Attention for Long Clinical Notes")
    assert "RETRACTED" in parsed.ids["ref-2"]
    assert set(parsed.ids) == {"ref-1", "ref-2", "ref-3", "ref-4"}
    # the warning's [2] links too; [5] names no reference and `x[1]` is code: neither links
    assert ("#ref-2", "[2]") in citations
    assert "Cats sleep twenty hours [5]." in page and "<code>x[1]</code>" in page
    # text from outside is text: no script, no javascript: link
    assert parsed.scripts == 0 and "&lt;script&gt;" in page
    assert not any(h.lower().startswith("javascript") for h, _, _ in parsed.links)
    assert "<title>Does attention &lt;script&gt;" in page


def test_an_entry_whose_title_names_its_page_does_not_say_it_twice() -> None:
    paged = ledger()
    paged[0]["title"] = "Sparse Attention for Long Clinical Notes, page 3"  # as research names it
    verified = Verified("Sparse attention scales [1].", [], [1], 1, [])
    parsed = _Anchors()
    parsed.feed(to_html(report_markdown(QUESTION, verified, paged), cited()))
    assert parsed.ids["ref-1"].startswith("[1] Sparse Attention for Long Clinical Notes, page 3")
    assert ("#ref-1", "[1, p. 3]", "citation") in [(h, t, k) for h, k, t in parsed.links]


def pdf_text(data: bytes) -> list[str]:
    """The PDF's pages as the project's own reader reads them."""
    read = read_document(data, load_settings().documents, name="report.pdf")
    return [page.text for page in read.pages]


def test_the_pdf_reads_back_with_its_citations_pages_and_references() -> None:
    data = to_pdf(report(), cited())
    assert data.startswith(b"%PDF-")
    text = "\n".join(pdf_text(data))
    flat = " ".join(text.split())
    assert "Sparse attention scales to long clinical notes [1, p. 3]." in flat
    assert "Two sources agree [1, p. 3][4]." in flat
    assert "References" in flat and "[1] p. 3, Sparse Attention for Long Clinical Notes" in flat
    assert "[2] Hydroxychloroquine or chloroquine" in flat and "RETRACTED" in flat
    assert "Removed as unsupported" in flat and "Cats sleep twenty hours [5]." in flat
    assert "<script>" in flat  # the question as it was asked, as text
    info = pypdf.PdfReader(io.BytesIO(data)).metadata
    assert info is not None and info.title == QUESTION


def _links(data: bytes) -> tuple[list[tuple[int, int | None]], list[str]]:
    """Each internal link's page and the page its destination is on; the links out."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    inside: list[tuple[int, int | None]] = []
    out: list[str] = []
    for number, page in enumerate(reader.pages):
        for annot in page.get("/Annots") or []:
            link: Any = annot.get_object()
            if "/Dest" in link:
                inside.append((number, reader.get_page_number(link["/Dest"][0].get_object())))
            elif "/A" in link:
                out.append(str(link["/A"]["/URI"]))
    return inside, out


def test_a_long_pdf_links_citations_across_pages_and_numbers_its_pages() -> None:
    long_body = "\n\n".join(
        f"Finding {i} of the review holds for long notes [{1 + i % 4}]." * 3 for i in range(60)
    )
    data = to_pdf(report(long_body), cited())
    pages = pdf_text(data)
    assert len(pages) >= 3
    # each page carries its number at its foot (which our reader leaves out, as it leaves
    # out every running footer: pypdf reads it)
    for number, page in enumerate(pypdf.PdfReader(io.BytesIO(data)).pages, start=1):
        foot: list[str] = []

        def at_foot(text: str, cm: Any, tm: Any, font: Any, size: Any, into: Any = foot) -> None:
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]  # where on the page, in points
            if text.strip() and y < 40:  # the lowest 40 points of the page
                into.append(text.strip())

        page.extract_text(visitor_text=at_foot)
        assert foot == [str(number)]
    inside, out = _links(data)
    entries = next(i for i, t in enumerate(pages) if "[1] p. 3, Sparse" in t)
    assert len(inside) >= 180 and all(dest == entries for _, dest in inside)
    assert {n for n, _ in inside} >= {0, 1}  # citations on the first pages, entries far on
    assert "https://arxiv.org/abs/2403.01234#page=3" in out


def test_without_debians_dejavu_the_pdf_is_written_in_the_font_reportlab_ships(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    family, files, mono = _report_pdf.font_files(tmp_path)  # no DejaVu there
    assert family == "Vera" and mono is None and all(p.is_file() for p in files.values())
    monkeypatch.setattr(_report_pdf, "DEJAVU", tmp_path)
    data = to_pdf(report(), cited())
    fonts = {
        str(f["/BaseFont"])
        for page in pypdf.PdfReader(io.BytesIO(data)).pages
        for f in page["/Resources"]["/Font"].values()
    }
    assert any("Vera" in f for f in fonts) and not any("DejaVu" in f for f in fonts), fonts
    assert "[1, p. 3]" in " ".join(" ".join(pdf_text(data)).split())


def test_the_docx_reads_back_with_headings_citations_and_linked_references() -> None:
    data = to_docx(report(), cited())
    document = docx.Document(io.BytesIO(data))
    headings = [(p.style.name, p.text) for p in document.paragraphs if p.style is not None]
    assert ("Heading 1", QUESTION) in headings
    assert ("Heading 2", "References") in headings
    assert ("Heading 2", "Removed as unsupported") in headings
    texts = [p.text for p in document.paragraphs]
    assert "Sparse attention scales to long clinical notes [1, p. 3]." in " ".join(texts)
    assert any(t.startswith("Two sources agree [1, p. 3][4]") for t in texts), texts
    entries = [p for p in document.paragraphs if re.match(r"^\[\d\] ", p.text)]
    assert [e.text[:3] for e in entries] == ["[1]", "[2]", "[3]", "[4]"]
    assert entries[0].text.startswith("[1] p. 3, Sparse Attention for Long Clinical Notes")
    xml = document.element.xml
    anchors = set(re.findall(r'w:anchor="([^"]+)"', xml))
    marks = dict(re.findall(r'w:bookmarkStart w:id="(\d+)" w:name="([^"]+)"', xml))
    assert anchors == {"ref-1", "ref-2", "ref-3", "ref-4"} == set(marks.values())
    for entry in entries:  # each bookmark on its own entry
        named = re.search(r'w:name="(ref-\d)"', entry._p.xml)
        assert named and named.group(1) == f"ref-{entry.text[1]}"
    rels = {r.target_ref for r in document.part.rels.values() if r.is_external}
    assert "https://arxiv.org/abs/2403.01234#page=3" in rels
    assert not any(t.lower().startswith("javascript") for t in rels)
    assert document.core_properties.title == QUESTION
    footer = document.sections[0].footer.paragraphs[0]._p.xml
    assert 'w:instr="PAGE"' in footer  # pages numbered


def test_the_export_names_its_file_and_refuses_a_report_not_yet_written() -> None:
    payload: ResearchPayload = {"run_id": "r1", "report": report(), "sources": sources()}  # type: ignore[typeddict-item]
    for value, (name, media) in {
        "PDF": ("r1-report.pdf", "application/pdf"),
        "word": ("r1-report.docx", "application/vnd.openxmlformats-officedocument"),
        "htm": ("r1-report.html", "text/html"),
    }.items():
        made = export_run(payload, value)
        assert made.filename == name and made.media_type.startswith(media)
    assert export_run(payload, "pdf").binary and not export_run(payload, "html").binary
    waiting: ResearchPayload = {"run_id": "r2", "report": "", "status": "running"}  # type: ignore[typeddict-item]
    with pytest.raises(RunNotReady, match="r2 has no report yet"):
        export_run(waiting, "docx")
    assert export_run(waiting, "md").data == b""  # the Markdown as it is, as before
