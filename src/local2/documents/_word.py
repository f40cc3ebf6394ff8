"""DOCX: the body of ``word/document.xml`` walked in order with lxml, page breaks kept.

python-docx (MIT) was the first choice, but its object model has no hard page breaks, lists
paragraphs and tables apart (``iter_inner_content`` aside), skips paragraphs inside tracked
insertions, repeats a merged cell once per column it spans, and loads every part of the
package, images included. The text is a small part of the file, so it is read directly:
paragraphs (runs, tabs, breaks, hyperlinks, fields' results, content controls, text
boxes once), tables row by row (cells split by tabs, nested tables inside their cell),
footnotes and endnotes after the body. Pages: where Word broke them when it last saved the
file (``w:lastRenderedPageBreak``) when it recorded that, else at hard page breaks, pages
breaks before paragraphs and section breaks.
"""

from __future__ import annotations

from lxml import etree

from local2.documents._model import Document, Limits
from local2.documents._pages import PageBuilder
from local2.documents._problems import corrupt
from local2.documents._safezip import SafeZip
from local2.documents._xml import dc_title, local, parse

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
BODY = "word/document.xml"
CORE = "docProps/core.xml"
NOTES = ("word/footnotes.xml", "word/endnotes.xml")
_CONTAINERS = {"sdt", "sdtContent", "customXml", "ins", "smartTag", "footnote", "endnote"}
_INLINE = {"tab": "\t", "cr": "\n", "noBreakHyphen": "-"}
_SKIPPED = {"delText", "instrText", "Fallback", "rPr", "pPr", "sectPr", "tblPr", "trPr", "tcPr"}
_SECTION_NEW_PAGE = {"nextPage", "oddPage", "evenPage"}


def _wanted(name: str) -> bool:
    return name in (BODY, CORE, *NOTES)


class _Walker:
    """Writes a story's text to the page builder, breaking pages as ``breaks`` says:
    ``rendered`` (where Word laid them out), ``hard`` (the author's breaks) or ``none``."""

    def __init__(self, out: PageBuilder, breaks: str) -> None:
        self.out = out
        self.breaks = breaks

    def block(self, element: etree._Element) -> None:
        for child in element:
            name = local(child.tag)
            if name == "p":
                self.paragraph(child)
            elif name == "tbl":
                self.table(child)
            elif name in _CONTAINERS:
                self.block(child)

    def paragraph(self, p: etree._Element) -> None:
        props = p.find(f"{W}pPr") if self.breaks == "hard" else None
        if props is not None and props.find(f"{W}pageBreakBefore") is not None:
            self.out.break_page()
        self.inline(p)
        self.out.write("\n")
        section = props.find(f"{W}sectPr") if props is not None else None
        if section is not None:
            kind = section.find(f"{W}type")
            if kind is None or kind.get(f"{W}val", "nextPage") in _SECTION_NEW_PAGE:
                self.out.break_page()

    def inline(self, element: etree._Element) -> None:
        for child in element:
            name = local(child.tag)
            if name in _SKIPPED:
                continue
            if name == "t":
                self.out.write(child.text or "")
            elif name in _INLINE:
                self.out.write(_INLINE[name])
            elif name == "br" and child.get(f"{W}type") in ("page", "column"):
                if child.get(f"{W}type") == "page" and self.breaks == "hard":
                    self.out.break_page()
            elif name == "br":
                self.out.write("\n")
            elif name == "lastRenderedPageBreak":
                if self.breaks == "rendered":
                    self.out.break_page()
            elif name in ("txbxContent", "tbl"):
                self.out.write("\n")
                self.block(child) if name == "txbxContent" else self.table(child)
            else:
                self.inline(child)

    def table(self, tbl: etree._Element) -> None:
        for row in (r for r in tbl if local(r.tag) == "tr"):
            for n, cell in enumerate(c for c in row if local(c.tag) == "tc"):
                if n:
                    self.out.write("\t")
                self.cell(cell)
            self.out.write("\n")

    def cell(self, cell: etree._Element) -> None:
        for n, child in enumerate(c for c in cell if local(c.tag) in ("p", "tbl", "sdt")):
            if n:
                self.out.write(" ")
            if local(child.tag) == "p":
                self.inline(child)
            else:
                self.out.write("\n")
                self.block(child) if local(child.tag) == "sdt" else self.table(child)


def read_docx(data: bytes, limits: Limits) -> Document:
    package = SafeZip(data, "docx", limits, _wanted)
    if BODY not in package:
        raise corrupt("docx", f"it has no {BODY}")
    body = parse(package.read(BODY), "docx", BODY).find(f"{W}body")
    out = PageBuilder("docx", limits)
    if body is not None:
        rendered = next(body.iter(f"{W}lastRenderedPageBreak"), None) is not None
        _Walker(out, "rendered" if rendered else "hard").block(body)
    notes = _Walker(out, "none")
    for name in NOTES:
        if name in package:
            for note in parse(package.read(name), "docx", name):
                if note.get(f"{W}type") is None:  # separators are typed
                    notes.block(note)
    title = ""
    if CORE in package:
        title = dc_title(parse(package.read(CORE), "docx", CORE))
    return Document("docx", title, out.pages())
