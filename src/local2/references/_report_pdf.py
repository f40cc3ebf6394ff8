"""The report as a PDF, laid out by ReportLab's Platypus (BSD) from the tokens every export
reads (:func:`local2.references._report.report_tokens`): headings, paragraphs, lists, quotes
and code; each citation an internal link to its entry under References (``[3, p. 12]`` where
the source is a document's page), each link out a link; the pages numbered.

The font is embedded in the file: DejaVu Sans from Debian's ``fonts-dejavu-core`` where it is
installed (``scripts/setup.sh`` installs it; it has Greek and Cyrillic), else Bitstream Vera,
which ships inside ReportLab. Nothing is fetched.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from markdown_it.token import Token

from local2.contracts import CitedSource
from local2.references._report import Nesting, report_tokens

if TYPE_CHECKING:
    from reportlab.lib.styles import ParagraphStyle

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
FACES = {  # ReportLab's face -> (DejaVu's file, Vera's file in reportlab/fonts)
    "": ("DejaVuSans.ttf", "Vera.ttf"),
    "B": ("DejaVuSans-Bold.ttf", "VeraBd.ttf"),
    "I": ("DejaVuSans-Oblique.ttf", "VeraIt.ttf"),
    "BI": ("DejaVuSans-BoldOblique.ttf", "VeraBI.ttf"),
}
MONO = "DejaVuSansMono.ttf"
BODY = 10.5
SIZES = {1: 18.0, 2: 14.0, 3: 12.5, 4: 11.5, 5: 11.0, 6: 11.0}
LINK = "#0645ad"
INDENT = 16.0  # points a list or quote is indented by


def font_files(folder: Path | None = None) -> tuple[str, dict[str, Path], Path | None]:
    """The body family's name and files by face, and the code font's file: DejaVu where
    Debian's files are (in ``folder``, default :data:`DEJAVU`), else the Vera that ships with
    ReportLab (code then in Courier)."""
    folder = folder or DEJAVU
    dejavu = {face: folder / names[0] for face, names in FACES.items()}
    if all(path.is_file() for path in dejavu.values()):
        mono = folder / MONO
        return "DejaVuSans", dejavu, mono if mono.is_file() else None
    import reportlab  # lazy: reportlab: ~3 ms, 3 modules at import

    shipped = Path(reportlab.__file__).parent / "fonts"
    return "Vera", {face: shipped / names[1] for face, names in FACES.items()}, None


def _register() -> tuple[str, str]:
    """The fonts registered with ReportLab (once a process): the body and code families."""
    # lazy: reportlab, PIL: ~33 ms, 57 modules at import
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    family, files, mono = font_files()
    names = {face: f"{family}{'-' + face if face else ''}" for face in files}
    if names[""] not in pdfmetrics.getRegisteredFontNames():
        for face, path in files.items():
            pdfmetrics.registerFont(TTFont(names[face], str(path)))
            addMapping(family, 1 if "B" in face else 0, 1 if "I" in face else 0, names[face])
        if mono is not None:
            pdfmetrics.registerFont(TTFont("DejaVuSansMono", str(mono)))
    return family, "DejaVuSansMono" if mono is not None else "Courier"


@dataclass
class _Markup:
    """An inline run as ReportLab's paragraph markup (its text escaped)."""

    mono: str
    parts: list[str] = field(default_factory=list)
    links: list[bool] = field(default_factory=list)  # per open link: whether it has an <a>

    def add(self, token: Token) -> None:
        kind = token.type
        tags = {"strong": "b", "em": "i", "s": "strike"}
        base = kind.rsplit("_", 1)[0]
        if base in tags and kind.endswith(("_open", "_close")):
            self.parts.append(f"<{'/' if kind.endswith('close') else ''}{tags[base]}>")
        elif kind == "link_open":
            href = str(token.attrs.get("href") or "")
            self.links.append(bool(href))
            if href:
                self.parts.append(f'<a href="{escape(href, {chr(34): "&quot;"})}" color="{LINK}">')
        elif kind == "link_close":
            if self.links and self.links.pop():
                self.parts.append("</a>")
        elif kind == "text":
            self.parts.append(escape(token.content))
        elif kind == "code_inline":
            self.parts.append(f'<font face="{self.mono}">{escape(token.content)}</font>')
        elif kind == "softbreak":
            self.parts.append(" ")
        elif kind == "hardbreak":
            self.parts.append("<br/>")

    def text(self) -> str:
        return "".join(self.parts)


class _Layout:
    """Tokens as Platypus flowables, one block after another."""

    def __init__(self, family: str, mono: str) -> None:
        # lazy: reportlab, PIL: ~24 ms, 30 modules at import
        from reportlab.lib.styles import ParagraphStyle

        self.mono = mono
        self.body = ParagraphStyle(
            "body", fontName=family, bulletFontName=family, fontSize=BODY, leading=BODY * 1.4
        )
        self.body.spaceAfter = 5
        self.headings = {
            level: ParagraphStyle(
                f"h{level}",
                parent=self.body,
                fontName=f"{family}-B",
                fontSize=size,
                leading=size * 1.3,
                spaceBefore=8 if level > 1 else 0,
                spaceAfter=6,
            )
            for level, size in SIZES.items()
        }
        self.code = ParagraphStyle("code", parent=self.body, fontName=mono, fontSize=BODY * 0.9)
        self.flowables: list[Any] = []
        self.nesting = Nesting()
        self.bullet = ""
        self.heading = 0
        self.target = ""

    def style(self) -> ParagraphStyle:
        # lazy: reportlab, PIL: ~24 ms, 30 modules at import
        from reportlab.lib.colors import HexColor
        from reportlab.lib.styles import ParagraphStyle

        if self.heading:
            return self.headings.get(self.heading, self.body)
        indent = INDENT * (len(self.nesting.lists) + self.nesting.quotes)
        if self.target:  # an entry of the References: its later lines hang under the first
            hang = 18.0
            return ParagraphStyle(
                "entry", parent=self.body, leftIndent=indent + hang, firstLineIndent=-hang
            )
        return ParagraphStyle(
            f"at{indent}",
            parent=self.body,
            leftIndent=indent,
            bulletIndent=max(0.0, indent - INDENT + 4),
            textColor=HexColor("#444444" if self.nesting.quotes else "#1b1b1b"),
            spaceAfter=2 if self.nesting.lists else 5,
        )

    def inline(self, children: Sequence[Token]) -> None:
        # lazy: reportlab, PIL: ~87 ms, 83 modules at import
        from reportlab.platypus import Paragraph

        markup = _Markup(self.mono)
        for token in children:
            markup.add(token)
        text = markup.text()
        if self.target:
            text = f'<a name="{self.target}"/>{text}'
        bullet, self.bullet = self.bullet, ""
        self.flowables.append(Paragraph(text, self.style(), bulletText=bullet or None))

    def block(self, token: Token) -> None:
        # lazy: reportlab, PIL: ~85 ms, 83 modules at import
        from reportlab.platypus import HRFlowable, Preformatted

        kind = token.type
        if kind == "heading_open":
            self.heading = int(token.tag[1:])
        elif kind == "heading_close":
            self.heading = 0
        elif kind == "paragraph_open":
            self.target = str(token.attrs.get("id") or "")
        elif kind == "paragraph_close":
            self.target = ""
        elif self.nesting.follow(token):
            if kind == "list_item_open" and self.nesting.lists:
                number = self.nesting.item
                self.bullet = f"{number}." if number else "•"
        elif kind in ("fence", "code_block"):
            code = token.content.rstrip("\n")
            self.flowables.append(Preformatted(code, self.code, maxLineLength=95))
        elif kind == "hr":
            self.flowables.append(HRFlowable(width="100%", thickness=0.5, color="#999999"))


def to_pdf(report: str, sources: Sequence[CitedSource]) -> bytes:
    """The report as a PDF: its citations linked to the References, pages kept."""
    # ReportLab is imported here, when a PDF is asked for, not when the server starts:
    # about 0.2 s (reportlab.platypus, `python -X importtime`, bench/report_exports.py)
    from reportlab.lib.pagesizes import A4

    # lazy: reportlab, PIL: ~84 ms, 83 modules at import
    from reportlab.lib.units import mm
    from reportlab.platypus import SimpleDocTemplate

    read = report_tokens(report, sources)
    family, mono = _register()
    layout = _Layout(family, mono)
    for token in read.tokens:
        if token.type == "inline":
            layout.inline(token.children or [])
        else:
            layout.block(token)

    def numbered(canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(family, 8)
        canvas.setFillColor("#6e6e6e")
        canvas.drawCentredString(A4[0] / 2, 10 * mm, f"{doc.page}")
        canvas.restoreState()

    out = io.BytesIO()
    doc = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
        title=read.title,
        author="LoCAL2",
        creator="LoCAL2",
        lang="en",
    )
    doc.build(layout.flowables, onFirstPage=numbered, onLaterPages=numbered)
    return out.getvalue()
