"""PPTX: python-pptx (MIT) reads the slides; each slide is a page, its speaker notes after it.

Slide order, layouts and placeholders are the part of the format worth a library. It loads
every part of the package, so it is given a copy with only the XML parts filled in (media
are never unpacked). Text frames (soft breaks ``\\v`` as newlines), tables row by row (cells
split by tabs) and group shapes, recursively, in the slide's shape order, title first.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

from local2.documents._model import Document, Limits
from local2.documents._pages import PageBuilder, check_page_count
from local2.documents._problems import corrupt
from local2.documents._safezip import SafeZip


def _wanted(name: str) -> bool:
    return name.endswith((".xml", ".rels"))


def shape_texts(shapes: Iterable[Any]) -> Iterator[str]:
    """The text of each shape, groups and tables included, in order."""
    # pptx: 171 modules at import, only in the reading worker
    from pptx.shapes.group import GroupShape

    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from shape_texts(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = ("\t".join(c.text for c in row.cells) for row in shape.table.rows)
            yield "\n".join(rows)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text.replace("\v", "\n")


def read_pptx(data: bytes, limits: Limits) -> Document:
    # pptx: 171 modules at import, only in the reading worker
    import pptx
    from pptx.exc import PackageNotFoundError  # lazy: pptx, PIL: ~83 ms, 136 modules at import

    package = SafeZip(data, "pptx", limits, _wanted)
    try:
        deck = pptx.Presentation(io.BytesIO(package.text_only_copy()))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise corrupt("pptx", str(exc)) from None
    slides = list(deck.slides)
    check_page_count(len(slides), "pptx", limits)
    out = PageBuilder("pptx", limits)
    for slide in slides:
        title = slide.shapes.title
        texts = [] if title is None else [title.text_frame.text.replace("\v", "\n")]
        others = (s for s in slide.shapes if title is None or s.shape_id != title.shape_id)
        texts += shape_texts(others)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                texts.append("Notes: " + notes.text.replace("\v", "\n"))
        out.add_page("\n".join(t for t in texts if t.strip()))
    return Document("pptx", deck.core_properties.title or "", out.pages())
