"""ODT: ``content.xml`` walked in order with lxml, as odfpy's ``teletype`` reads text.

odfpy is sdist-only and its licence is unclear (GPL-2+/Apache-2.0 in its README, LGPL-2.1+
in its files), and the text is one XML part: ``text:s`` becomes ``c`` spaces, ``text:tab``
a tab, ``text:line-break`` a newline; tracked deletions and comments are left out; tables
row by row, cells split by tabs. Pages: LibreOffice's ``text:soft-page-break`` where it laid
them out when it saved the file, else paragraphs whose automatic style breaks the page.
"""

from __future__ import annotations

from lxml import etree

from local2.documents._model import Document, Limits
from local2.documents._pages import PageBuilder
from local2.documents._problems import corrupt
from local2.documents._safezip import SafeZip
from local2.documents._xml import dc_title, local, parse

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
FO = "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"
CONTENT = "content.xml"
META = "meta.xml"
_SKIPPED = {"tracked-changes", "annotation", "note-citation", "bookmark-ref", "sequence-decls"}
_BLOCKS = {"p", "h"}


def _page_break_styles(root: etree._Element) -> tuple[set[str], set[str]]:
    """Names of the automatic paragraph styles that break the page before, and after."""
    before: set[str] = set()
    after: set[str] = set()
    for style in root.iter(f"{STYLE}style"):
        props = style.find(f"{STYLE}paragraph-properties")
        if props is None:
            continue
        name = style.get(f"{STYLE}name", "")
        if props.get(f"{FO}break-before") == "page":
            before.add(name)
        if props.get(f"{FO}break-after") == "page":
            after.add(name)
    return before, after


class _Walker:
    def __init__(self, out: PageBuilder, root: etree._Element) -> None:
        self.out = out
        self.soft = next(root.iter(f"{TEXT}soft-page-break"), None) is not None
        self.before, self.after = (set(), set()) if self.soft else _page_break_styles(root)

    def block(self, element: etree._Element) -> None:
        for child in element:
            name = local(child.tag)
            if name in _SKIPPED:
                continue
            if name == "soft-page-break":
                self.out.break_page()
            elif name in _BLOCKS:
                self.paragraph(child)
            elif name == "table-row":
                self.row(child)
            else:
                self.block(child)

    def paragraph(self, p: etree._Element) -> None:
        style = p.get(f"{TEXT}style-name", "")
        if style in self.before:
            self.out.break_page()
        self.inline(p)
        self.out.write("\n")
        if style in self.after:
            self.out.break_page()

    def inline(self, element: etree._Element) -> None:
        self.out.write(element.text or "")
        for child in element:
            name = local(child.tag)
            if name == "s":
                self.out.write(" " * int(child.get(f"{TEXT}c", "1") or 1))
            elif name == "tab":
                self.out.write("\t")
            elif name == "line-break":
                self.out.write("\n")
            elif name == "soft-page-break":
                self.out.break_page()
            elif name in _BLOCKS:  # inside a note's body
                self.out.write(" ")
                self.inline(child)
            elif name not in _SKIPPED:
                self.inline(child)
            self.out.write(child.tail or "")

    def row(self, row: etree._Element) -> None:
        for n, cell in enumerate(c for c in row if local(c.tag) == "table-cell"):
            if n:
                self.out.write("\t")
            for m, p in enumerate(c for c in cell if local(c.tag) in _BLOCKS):
                self.out.write(" " if m else "")
                self.inline(p)
        self.out.write("\n")


def _wanted(name: str) -> bool:
    return name in (CONTENT, META, "mimetype")


def read_odt(data: bytes, limits: Limits) -> Document:
    package = SafeZip(data, "odt", limits, _wanted)
    if CONTENT not in package:
        raise corrupt("odt", f"it has no {CONTENT}")
    root = parse(package.read(CONTENT), "odt", CONTENT)
    out = PageBuilder("odt", limits)
    body = root.find("{urn:oasis:names:tc:opendocument:xmlns:office:1.0}body")
    if body is not None:
        _Walker(out, root).block(body)
    title = dc_title(parse(package.read(META), "odt", META)) if META in package else ""
    return Document("odt", title, out.pages())
