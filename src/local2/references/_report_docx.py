"""The report as a Word document (DOCX), written by python-docx from the tokens every export
reads (:func:`local2.references._report.report_tokens`): Word's own heading, list and quote
styles; each citation an internal link to its entry under References, a bookmark named
``ref-n`` (``[3, p. 12]`` where the source is a document's page); each link out a hyperlink;
the pages numbered in the footer (a ``PAGE`` field Word fills in).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markdown_it.token import Token

from local2.contracts import CitedSource
from local2.references._report import Nesting, report_tokens

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.text.paragraph import Paragraph

LINK_RGB = (0x06, 0x45, 0xAD)
MONO = "Courier New"


@dataclass
class _Style:
    bold: int = 0
    italic: int = 0
    strike: int = 0
    links: list[str] = field(default_factory=list)


class _Writer:
    """Tokens written into a python-docx document one after another."""

    def __init__(self, doc: DocxDocument) -> None:
        # lazy: docx, lxml: ~55 ms, 103 modules at import
        from docx.oxml import OxmlElement
        from docx.oxml.ns import qn

        self.doc = doc
        self.element = OxmlElement
        self.qn = qn
        self.paragraph: Paragraph | None = None
        self.nesting = Nesting()
        self.marker = ""
        self.bookmarks = 0
        self.open_mark: str | None = None

    def _hyperlink(self, paragraph: Paragraph, href: str) -> Any:
        # lazy: docx, lxml: ~51 ms, 103 modules at import
        from docx.opc.constants import RELATIONSHIP_TYPE

        link = self.element("w:hyperlink")
        if href.startswith("#"):
            link.set(self.qn("w:anchor"), href[1:])
        else:
            rel = paragraph.part.relate_to(href, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
            link.set(self.qn("r:id"), rel)
        _xml(paragraph).append(link)
        return link

    def run(self, text: str, style: _Style, code: bool = False) -> None:
        from docx.shared import RGBColor  # lazy: docx, lxml: ~37 ms, 103 modules at import

        paragraph = self.paragraph
        if paragraph is None:
            return
        target = _real(style)
        link = self._hyperlink(paragraph, target[0]) if target else None
        run = paragraph.add_run(text)
        run.bold = bool(style.bold) or None
        run.italic = bool(style.italic) or None
        if style.strike:
            run.font.strike = True
        if code:
            run.font.name = MONO
        if link is not None:
            run.font.color.rgb = RGBColor(*LINK_RGB)
            run.font.underline = not target[0].startswith("#")
            link.append(run._r)  # the run moves into the hyperlink

    def inline(self, children: Sequence[Token]) -> None:
        if self.paragraph is None:
            self.paragraph = self.doc.add_paragraph()
        style = _Style()
        if self.marker:
            self.run(self.marker + " ", style)
            self.marker = ""
        for token in children:
            kind = token.type
            if kind in ("strong_open", "strong_close"):
                style.bold += 1 if kind.endswith("open") else -1
            elif kind in ("em_open", "em_close"):
                style.italic += 1 if kind.endswith("open") else -1
            elif kind in ("s_open", "s_close"):
                style.strike += 1 if kind.endswith("open") else -1
            elif kind == "link_open":
                style.links.append(str(token.attrs.get("href") or ""))
            elif kind == "link_close" and style.links:
                style.links.pop()
            elif kind == "text":
                self.run(token.content, style)
            elif kind == "code_inline":
                self.run(token.content, style, code=True)
            elif kind == "softbreak":
                self.run(" ", style)
            elif kind == "hardbreak" and self.paragraph is not None:
                self.paragraph.add_run().add_break()

    def _paragraph_style(self) -> str:
        lists = self.nesting.lists
        if self.nesting.quotes:
            return "Quote"
        if lists and not lists[-1][0]:
            depth = min(len(lists), 3)
            return "List Bullet" if depth == 1 else f"List Bullet {depth}"
        return "List Paragraph" if lists else "Normal"

    def block(self, token: Token) -> None:
        kind = token.type
        if kind == "heading_open":
            self.paragraph = self.doc.add_heading("", level=min(int(token.tag[1:]), 9))
        elif kind == "paragraph_open":
            self.paragraph = self.doc.add_paragraph(style=self._paragraph_style())
            if self.nesting.lists and self.nesting.lists[-1][0] == 0:
                self.marker = ""  # Word's bullet style draws the bullet
            if name := str(token.attrs.get("id") or ""):
                self.bookmarks += 1
                mark = self.element("w:bookmarkStart")
                mark.set(self.qn("w:id"), str(self.bookmarks))
                mark.set(self.qn("w:name"), name)
                _xml(self.paragraph).append(mark)
                self.open_mark = str(self.bookmarks)
        elif kind in ("paragraph_close", "heading_close"):
            if self.open_mark is not None and self.paragraph is not None:
                end = self.element("w:bookmarkEnd")
                end.set(self.qn("w:id"), self.open_mark)
                _xml(self.paragraph).append(end)
                self.open_mark = None
            self.paragraph = None
        elif self.nesting.follow(token):
            if kind == "list_item_open" and self.nesting.lists:
                number = self.nesting.item
                self.marker = f"{number}." if number else ""
        elif kind in ("fence", "code_block"):
            paragraph = self.doc.add_paragraph(style="No Spacing")
            paragraph.add_run(token.content.rstrip("\n")).font.name = MONO
        elif kind == "hr":
            self.doc.add_paragraph("—" * 12)


def _xml(paragraph: Paragraph) -> Any:
    """The paragraph's ``w:p`` element, to add what python-docx has no call for (a hyperlink,
    a bookmark, a field)."""
    return paragraph._p


def _real(style: _Style) -> list[str]:
    """The innermost link that goes somewhere (a dropped link is text)."""
    return [href for href in style.links if href][-1:]


def _page_numbers(doc: DocxDocument) -> None:
    # lazy: docx, lxml: ~56 ms, 103 modules at import
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    footer = doc.sections[0].footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    field_ = OxmlElement("w:fldSimple")
    field_.set(qn("w:instr"), "PAGE")
    _xml(footer).append(field_)


def to_docx(report: str, sources: Sequence[CitedSource]) -> bytes:
    """The report as a DOCX file: its citations linked to the References, pages kept."""
    # python-docx (and lxml's document model) imported here, when a DOCX is asked for: not
    # when the server starts (its import measured in bench/report_exports.py)
    from docx import Document

    read = report_tokens(report, sources)
    doc = Document()
    doc.core_properties.title = read.title
    doc.core_properties.author = "LoCAL2"
    writer = _Writer(doc)
    for token in read.tokens:
        if token.type == "inline":
            writer.inline(token.children or [])
        else:
            writer.block(token)
    _page_numbers(doc)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
