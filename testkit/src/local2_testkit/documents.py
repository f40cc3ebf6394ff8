"""Documents made at test time whose text is known: the corpus of ``bench/documents.py`` and
``tests/documents/test_documents_*.py``.

Each sample is the file's bytes and the text of each page as it was written. PDFs are made
with reportlab (one and two columns, a table, footnotes, ligatures, Greek, Cyrillic and
Chinese, a scanned page rendered by Pillow), DOCX with python-docx and PPTX with
python-pptx (the writers, not our readers), ODT and EPUB by hand after their specs.
reportlab and python-docx are development dependencies.
"""

from __future__ import annotations

import io
import random
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Flowable

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
_VOCABULARY = """
    harbour bridge river town council engineer repair winter spring summer iron stone
    tide mill grain market ledger lantern signal keeper ferry pier channel survey map
    record letter report budget vote meeting mayor bell tower chapel road canal lock
    barge cargo timber rope anchor storm gale flood wall gate clock school library
"""
_WORDS = tuple(_VOCABULARY.split())
_LIGATURE_WORDS = ("ﬁeld", "ﬂood", "oﬃce", "aﬄuent", "ﬁnal", "ﬂoor", "eﬀort", "ﬁsh")


@dataclass(frozen=True)
class Sample:
    """A document and the text written on each of its pages (slides, chapters)."""

    name: str
    data: bytes
    pages: tuple[str, ...]
    scanned: tuple[int, ...] = ()  # pages that are an image of their text

    @property
    def text(self) -> str:
        return "\n\n".join(self.pages)


def sentences(seed: int, count: int, words: tuple[str, ...] = ()) -> list[str]:
    """Plain sentences of a small vocabulary (``words`` mixed in), the same for a seed."""
    rng = random.Random(seed)
    vocab = list(_WORDS) + list(words)
    out = []
    for _ in range(count):
        body = " ".join(rng.choice(vocab) for _ in range(rng.randint(8, 16)))
        out.append(body[0].upper() + body[1:] + ".")
    return out


def paragraphs(seed: int, count: int, per: int = 4, words: tuple[str, ...] = ()) -> list[str]:
    flat = sentences(seed, count * per, words)
    return [" ".join(flat[i * per : (i + 1) * per]) for i in range(count)]


def fonts() -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfbase.ttfonts import TTFont

    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(DEJAVU / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))


def styles(size: float = 10) -> ParagraphStyle:
    from reportlab.lib.styles import ParagraphStyle

    return ParagraphStyle("body", fontName="DejaVu", fontSize=size, leading=size * 1.3)


def _build(story: list[Flowable], columns: int = 1, title: str = "") -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate

    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4, title=title, invariant=True)
    width = (doc.width - 12 * (columns - 1)) / columns
    frames = [
        Frame(doc.leftMargin + i * (width + 12), doc.bottomMargin, width, doc.height, id=f"c{i}")
        for i in range(columns)
    ]
    doc.addPageTemplates([PageTemplate(frames=frames)])
    doc.build(story)
    return out.getvalue()


def _paged(pages: list[list[str]], columns: int = 1, title: str = "") -> bytes:
    """Each inner list on its own page, one paragraph each (text must fit the page)."""
    from reportlab.platypus import PageBreak, Paragraph

    fonts()
    style = styles()
    story: list[Flowable] = []
    for n, page in enumerate(pages):
        if n:
            story.append(PageBreak())
        story += [Paragraph(text, style) for text in page]
    return _build(story, columns, title)


def pdf_of(pages: list[list[str]], title: str = "") -> bytes:
    """A PDF of these pages, one paragraph per string (the end-to-end tests' documents)."""
    return _paged(pages, title=title)


def one_column_pdf() -> Sample:
    pages = [paragraphs(1 + n, 4) for n in range(3)]
    return Sample("one-column.pdf", _paged(pages, title="One column"), _joined(pages))


def two_column_pdf() -> Sample:
    """Two pages of two columns, flowing in order (a paragraph split between them)."""
    pages = [paragraphs(11 + n, 9) for n in range(2)]
    return Sample("two-columns.pdf", _paged(pages, columns=2), _joined(pages))


def table_pdf() -> Sample:
    from reportlab.lib import colors
    from reportlab.platypus import Paragraph, Table, TableStyle

    fonts()
    rows = [["Year", "Town", "Repair", "Cost"]]
    rng = random.Random(5)
    for year in range(1990, 2002):
        rows.append([str(year), rng.choice(_WORDS), rng.choice(_WORDS), f"{rng.randint(1, 999)}0"])
    intro = paragraphs(21, 1)[0]
    table = Table(rows)
    table.setStyle(
        TableStyle(
            [("FONT", (0, 0), (-1, -1), "DejaVu", 10), ("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]
        )
    )
    data = _build([Paragraph(intro, styles()), table])
    text = intro + "\n" + "\n".join(" ".join(r) for r in rows)
    return Sample("table.pdf", data, (text,))


def footnotes_pdf() -> Sample:
    from reportlab.pdfgen import canvas
    from reportlab.platypus import Frame, Paragraph

    fonts()
    body = paragraphs(31, 3)
    marked = [body[0] + "<super>1</super>", body[1] + "<super>2</super>", body[2]]
    notes = ["1 " + sentences(32, 1)[0], "2 " + sentences(33, 1)[0]]
    out = io.BytesIO()
    c = canvas.Canvas(out, invariant=True)
    Frame(72, 200, 451, 570).addFromList([Paragraph(t, styles()) for t in marked], c)
    Frame(72, 60, 451, 120).addFromList([Paragraph(t, styles(7)) for t in notes], c)
    c.showPage()
    c.save()
    text = "\n".join([body[0] + "1", body[1] + "2", body[2], *notes])
    return Sample("footnotes.pdf", out.getvalue(), (text,))


def ligatures_pdf() -> Sample:
    """Words set with the ligature glyphs ﬁ ﬂ ﬃ ﬄ ﬀ; the text is their letters."""
    pages = [paragraphs(41, 4, words=_LIGATURE_WORDS)]
    truth = [[_unligature(p) for p in page] for page in pages]
    return Sample("ligatures.pdf", _paged(pages), _joined(truth))


def _unligature(text: str) -> str:
    for glyph, letters in zip("ﬀﬁﬂﬃﬄ", ("ff", "fi", "fl", "ffi", "ffl"), strict=True):
        text = text.replace(glyph, letters)
    return text


GREEK = "Η γέφυρα του λιμανιού χτίστηκε το 1894 και επισκευάστηκε την άνοιξη."
CYRILLIC = "Мост в гавани построили в 1894 году и отремонтировали весной."
CHINESE = "港口的桥建于一八九四年，春天修好了。"


def scripts_pdf() -> Sample:
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph

    fonts()
    cjk = ParagraphStyle("cjk", fontName="STSong-Light", fontSize=10, leading=13, wordWrap="CJK")
    story: list[Flowable] = [
        Paragraph(GREEK, styles()),
        Paragraph(CYRILLIC, styles()),
        Paragraph(CHINESE, cjk),
    ]
    return Sample("scripts.pdf", _build(story), ("\n".join([GREEK, CYRILLIC, CHINESE]),))


SCANNED_LINES = (
    "The harbour bridge of Kelsby was built in 1894",
    "and repaired in the spring of 2024 by the",
    "town's own engineers, who replaced the pivot.",
)


def page_image(lines: tuple[str, ...], dpi: int = 150) -> Image:
    """A white A4 page at ``dpi`` with ``lines`` in black (a Pillow image), as a scan."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = int(8.27 * dpi), int(11.69 * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(DEJAVU / "DejaVuSerif.ttf"), int(dpi * 0.19))
    for n, line in enumerate(lines):
        draw.text((int(dpi * 0.7), int(dpi * (1 + 0.33 * n))), line, font=font, fill=0)
    return image


def scanned_pdf() -> Sample:
    """A text page, a scanned page (an image of text, no text layer), another text page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    before, after = sentences(51, 1)[0], sentences(52, 1)[0]
    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=A4, invariant=True)
    c.setFont("Helvetica", 11)
    c.drawString(72, 760, before)
    c.showPage()
    c.drawImage(ImageReader(page_image(SCANNED_LINES)), 0, 0, *A4)
    c.showPage()
    c.setFont("Helvetica", 11)
    c.drawString(72, 760, after)
    c.showPage()
    c.save()
    return Sample("scanned.pdf", out.getvalue(), (before, "\n".join(SCANNED_LINES), after), (2,))


def long_pdf(pages: int = 500) -> Sample:
    """``pages`` pages of a few plain lines each (the long-document timing)."""
    from reportlab.pdfgen import canvas

    lines = sentences(61, 40)
    out = io.BytesIO()
    c = canvas.Canvas(out, invariant=True)
    written = []
    for n in range(pages):
        text = [f"Page {n + 1}.", *lines[n % 30 : n % 30 + 8]]
        c.setFont("Helvetica", 10)
        for i, line in enumerate(text):
            c.drawString(50, 780 - 14 * i, line)
        c.showPage()
        written.append("\n".join(text))
    c.save()
    return Sample(f"long-{pages}.pdf", out.getvalue(), tuple(written))


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, a word split with a hyphen to fill each."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if len(candidate) <= width:
            line = candidate
            continue
        room = width - len(line) - (2 if line else 1)
        if room >= 3 and len(word) - room >= 3:
            lines.append(f"{line} {word[:room]}-".strip())
            line = word[room:]
        else:
            lines.append(line)
            line = word
    return [*lines, line] if line else lines


def hyphenated_pdf() -> Sample:
    """Justified-looking lines whose last word is split with a hyphen, as typesetters do."""
    from reportlab.pdfgen import canvas

    text = " ".join(paragraphs(131, 3))
    out = io.BytesIO()
    c = canvas.Canvas(out, invariant=True)
    c.setFont("Helvetica", 10)
    for n, line in enumerate(wrap(text, 60)):
        c.drawString(72, 780 - 13 * n, line)
    c.showPage()
    c.save()
    return Sample("hyphenated.pdf", out.getvalue(), (text,))


def pdf_samples() -> list[Sample]:
    return [
        one_column_pdf(),
        two_column_pdf(),
        table_pdf(),
        footnotes_pdf(),
        ligatures_pdf(),
        scripts_pdf(),
        hyphenated_pdf(),
        scanned_pdf(),
    ]


def _joined(pages: list[list[str]]) -> tuple[str, ...]:
    return tuple("\n".join(page) for page in pages)


# -- office documents and books -------------------------------------------------------------


def docx_sample() -> Sample:
    """Two pages (a hard break): a heading, paragraphs, a table; Greek on page 2."""
    import docx
    from docx.enum.text import WD_BREAK

    doc = docx.Document()
    doc.core_properties.title = "Harbour report"
    first = paragraphs(71, 2)
    doc.add_heading("Kelsby harbour", 1)
    for text in first:
        doc.add_paragraph(text)
    rows = [["Year", "Repair"], ["1894", "built"], ["2024", "pivot"]]
    table = doc.add_table(rows=3, cols=2)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_paragraph().add_run().add_break(WD_BREAK.PAGE)  # as add_page_break() does
    second = [*paragraphs(72, 1), GREEK]
    for text in second:
        doc.add_paragraph(text)
    out = io.BytesIO()
    doc.save(out)
    page1 = "\n".join(["Kelsby harbour", *first, *("\t".join(r) for r in rows)])
    return Sample("report.docx", out.getvalue(), (page1, "\n".join(second)))


def docx_of(pages: list[list[str]], title: str = "") -> bytes:
    """A Word document of these pages (hard page breaks between), a paragraph per string."""
    import docx
    from docx.enum.text import WD_BREAK

    doc = docx.Document()
    doc.core_properties.title = title
    for n, page in enumerate(pages):
        if n:
            doc.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
        for text in page:
            doc.add_paragraph(text)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def pptx_of(slides: list[tuple[str, str]], title: str = "") -> bytes:
    """A presentation of ``(title, body)`` slides."""
    import pptx

    deck = pptx.Presentation()
    deck.core_properties.title = title
    for heading, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = heading
        slide.placeholders[1].text = body
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def pptx_sample() -> Sample:
    """Three slides: title and body, a table, and a slide with speaker notes."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    deck.core_properties.title = "Harbour slides"
    texts = sentences(81, 4)
    s1 = deck.slides.add_slide(deck.slide_layouts[1])
    s1.shapes.title.text = "Kelsby harbour"
    s1.placeholders[1].text = texts[0]
    s2 = deck.slides.add_slide(deck.slide_layouts[5])
    s2.shapes.title.text = "Repairs"
    rows = [["Year", "Repair"], ["1894", "built"], ["2024", "pivot"]]
    grid = s2.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    s3 = deck.slides.add_slide(deck.slide_layouts[1])
    s3.shapes.title.text = "Next steps"
    s3.placeholders[1].text = texts[1]
    s3.notes_slide.notes_text_frame.text = texts[2]
    out = io.BytesIO()
    deck.save(out)
    pages = (
        f"Kelsby harbour\n{texts[0]}",
        "Repairs\n" + "\n".join("\t".join(r) for r in rows),
        f"Next steps\n{texts[1]}\nNotes: {texts[2]}",
    )
    return Sample("slides.pptx", out.getvalue(), pages)


_ODT_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"'
)


def odt_sample(soft_breaks: bool = True) -> Sample:
    """Two pages: LibreOffice's soft page break (or a style that breaks the page), spaces
    written as ``text:s``, a tab, a line break, a table and a footnote."""
    first, second = paragraphs(91, 2), paragraphs(92, 1)[0]
    brk = "<text:soft-page-break/>" if soft_breaks else ""
    style = "" if soft_breaks else ' text:style-name="P1"'
    content = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {_ODT_NS} office:version="1.3">
<office:automatic-styles><style:style style:name="P1" style:family="paragraph">
<style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>
<office:body><office:text>
<text:h text:outline-level="1">Kelsby harbour</text:h>
<text:p>{first[0]}</text:p>
<text:p>Cost:<text:s text:c="3"/>forty<text:tab/>pounds<text:line-break/>paid in 1894</text:p>
<table:table><table:table-row><table:table-cell><text:p>Year</text:p></table:table-cell>
<table:table-cell><text:p>Repair</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>2024</text:p></table:table-cell>
<table:table-cell><text:p>pivot</text:p></table:table-cell></table:table-row></table:table>
<text:p>{first[1]}<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>
<text:note-body><text:p>A note on the bridge.</text:p></text:note-body></text:note></text:p>
{brk}<text:p{style}>{second}</text:p>
</office:text></office:body></office:document-content>"""
    meta = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta {_ODT_NS}><office:meta><dc:title>Harbour notes</dc:title>
</office:meta></office:document-meta>"""
    data = _zip(
        [
            ("mimetype", b"application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED),
            ("content.xml", content.encode(), zipfile.ZIP_DEFLATED),
            ("meta.xml", meta.encode(), zipfile.ZIP_DEFLATED),
        ]
    )
    page1 = "\n".join(
        [
            "Kelsby harbour",
            first[0],
            "Cost:   forty\tpounds\npaid in 1894",
            "Year\tRepair",
            "2024\tpivot",
            first[1] + " A note on the bridge.",
        ]
    )
    return Sample("notes.odt", data, (page1, second))


def epub_sample() -> Sample:
    """Three chapters in the spine's order (not the manifest's), one file name URL-encoded."""
    chapters = [("Arrival", paragraphs(101, 2)), ("The bridge", paragraphs(102, 2))]
    chapters.append(("Записки", [CYRILLIC]))
    files = ["text/ch 1.xhtml", "text/ch2.xhtml", "text/ch3.xhtml"]
    members: list[tuple[str, bytes, int]] = [
        ("mimetype", b"application/epub+zip", zipfile.ZIP_STORED),
        (
            "META-INF/container.xml",
            b'<?xml version="1.0"?><container version="1.0" '
            b'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            b'<rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/>'
            b"</rootfiles></container>",
            zipfile.ZIP_DEFLATED,
        ),
    ]
    manifest = "".join(
        f'<item id="c{n}" href="{f.replace(" ", "%20")}" media-type="application/xhtml+xml"/>'
        for n, f in reversed(list(enumerate(files)))
    )
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(files)))
    opf = (
        '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>Harbour tales</dc:title></metadata><manifest>{manifest}</manifest>"
        f"<spine>{spine}</spine></package>"
    )
    members.append(("OEBPS/book.opf", opf.encode(), zipfile.ZIP_DEFLATED))
    pages = []
    for (title, body), name in zip(chapters, files, strict=True):
        paras = "".join(f"<p>{p}</p>" for p in body)
        xhtml = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{title}</title></head><body><header><h1>{title}</h1></header>"
            f"{paras}</body></html>"
        )
        members.append((f"OEBPS/{name}", xhtml.encode(), zipfile.ZIP_DEFLATED))
        pages.append("\n".join([title, *body]))
    return Sample("tales.epub", _zip(members), tuple(pages))


def html_sample() -> Sample:
    body = paragraphs(111, 3)
    markup = (
        "<html><head><title>Kelsby harbour news</title></head><body><nav>Home | News | "
        "Contact</nav><article><h1>Harbour bridge repaired</h1>"
        + "".join(f"<p>{p}</p>" for p in body)
        + "</article><footer>Copyright Kelsby Gazette</footer></body></html>"
    )
    return Sample("news.html", markup.encode(), ("\n".join(["Harbour bridge repaired", *body]),))


def text_sample() -> Sample:
    pages = ("# Notes\n" + paragraphs(121, 1)[0], paragraphs(122, 1)[0])
    return Sample("notes.md", "\f".join(pages).encode(), pages)


def office_samples() -> list[Sample]:
    return [docx_sample(), pptx_sample(), odt_sample(), epub_sample(), html_sample(), text_sample()]


def _zip(members: list[tuple[str, bytes, int]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data, method in members:
            archive.writestr(name, data, compress_type=method)
    return out.getvalue()
