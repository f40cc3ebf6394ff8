"""PDF pages laid out as papers, reports and newsletters are, each drawn in reading order
and out of it: the layout corpus of ``bench/documents.py`` and
``tests/documents/test_documents_layout.py``.

The text flows through reportlab frames (columns, a full-width title or table) in reading
order; the frames are then drawn onto the page in the order a sample names, so the same
page can be written the way most writers do (in order) or the way some do (the right
column first, the title last, line by line across the columns). The text written, in
reading order, is the sample's truth: a paragraph split between columns is still one
paragraph, a table is its rows, cells in order.
"""

from __future__ import annotations

import io
import random
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from local2_testkit.documents import Sample, fonts, paragraphs, sentences, styles, wrap

if TYPE_CHECKING:
    from reportlab.pdfgen.canvas import Canvas
    from reportlab.platypus import Flowable, Frame

WIDTH, HEIGHT = 595.27, 841.89  # A4 in points
MARGIN = 56.0
GUTTER = 18.0


@dataclass(frozen=True)
class Area:
    """A frame on the page and what flows into it (``story`` is shared between areas that
    continue each other, as columns do)."""

    x: float
    y: float
    width: float
    height: float
    story: int = 0


def _frame(area: Area) -> Frame:
    from reportlab.platypus import Frame

    return Frame(area.x, area.y, area.width, area.height, 0, 0, 0, 0)


def _fill(frame: Frame, story: list[Flowable], canvas: Canvas) -> list[Flowable]:
    """Flowables from the front of ``story`` until ``frame`` is full (the last one split)."""
    drawn: list[Flowable] = []
    while story:
        head = story[0]
        if frame.add(head, canvas):
            drawn.append(story.pop(0))
            continue
        parts = frame.split(head, canvas)
        if len(parts) > 1 and frame.add(parts[0], canvas):
            drawn.append(parts[0])
            story[0:1] = parts[1:]
        break
    return drawn


def laid_out(
    areas: Sequence[Area], stories: Sequence[list[Flowable]], order: Sequence[int]
) -> bytes:
    """One page: the stories flowed through ``areas`` in reading order, drawn in ``order``."""
    from reportlab.pdfgen.canvas import Canvas

    queues = [list(story) for story in stories]
    scratch = Canvas(io.BytesIO())
    contents = [_fill(_frame(area), queues[area.story], scratch) for area in areas]
    if any(queues):
        left = sum(len(q) for q in queues)
        raise ValueError(f"the page is full: {left} flowables left over")
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(WIDTH, HEIGHT), invariant=True)
    for n in order:
        frame = _frame(areas[n])
        for flowable in contents[n]:
            frame.add(flowable, canvas)
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def _columns(
    count: int, top: float, bottom: float, story: int = 0, gutter: float = GUTTER
) -> list[Area]:
    width = (WIDTH - 2 * MARGIN - (count - 1) * gutter) / count
    return [
        Area(MARGIN + n * (width + gutter), bottom, width, top - bottom, story)
        for n in range(count)
    ]


def _body(texts: list[str], size: float = 10) -> list[Flowable]:  # (Paragraphs)
    from reportlab.platypus import Paragraph

    fonts()
    style = styles(size)
    style.spaceAfter = size * 0.5
    return [Paragraph(text, style) for text in texts]


def _sample(name: str, data: bytes, texts: list[str]) -> Sample:
    return Sample(name, data, ("\n".join(texts),))


def columns_pdf(right_first: bool = False) -> Sample:
    """Two columns of flowing paragraphs, a paragraph split between them."""
    texts = paragraphs(201, 9)
    areas = _columns(2, HEIGHT - MARGIN, MARGIN)
    order = [1, 0] if right_first else [0, 1]
    name = "columns-right-first.pdf" if right_first else "columns.pdf"
    return _sample(name, laid_out(areas, [_body(texts)], order), texts)


def title_columns_pdf(title_last: bool = False) -> Sample:
    """A paper's first page: title, authors and abstract across the page, two columns below."""
    from reportlab.platypus import Paragraph

    fonts()
    title_style, small = styles(16), styles(9)
    title = "Repairing the swing bridge of Kelsby harbour"
    authors = "A. Keeper and B. Engineer, Kelsby Town Council"
    abstract = "Abstract. " + paragraphs(211, 1, per=5)[0]
    head: list[Flowable] = [
        Paragraph(title, title_style),
        Paragraph(authors, small),
        Paragraph(abstract, small),
    ]
    texts = paragraphs(212, 8)
    top = HEIGHT - MARGIN - 150
    areas = [Area(MARGIN, top + 12, WIDTH - 2 * MARGIN, 150, 0), *_columns(2, top, MARGIN, 1)]
    order = [2, 1, 0] if title_last else [0, 1, 2]
    name = "title-columns-title-last.pdf" if title_last else "title-columns.pdf"
    data = laid_out(areas, [head, _body(texts)], order)
    return _sample(name, data, [title, authors, abstract, *texts])


def three_columns_pdf(shuffled: bool = False) -> Sample:
    """Three narrow columns of 9-point text, as a newsletter."""
    texts = paragraphs(221, 11, per=3)
    areas = _columns(3, HEIGHT - MARGIN, MARGIN)
    order = [1, 2, 0] if shuffled else [0, 1, 2]
    name = "three-columns-shuffled.pdf" if shuffled else "three-columns.pdf"
    return _sample(name, laid_out(areas, [_body(texts, 9)], order), texts)


def _table(rows: Sequence[list[Any]], widths: list[float] | None = None) -> Flowable:
    from reportlab.lib import colors
    from reportlab.platypus import Table, TableStyle

    table = Table(rows, colWidths=widths)
    table.setStyle(
        TableStyle(
            [("FONT", (0, 0), (-1, -1), "DejaVu", 9), ("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]
        )
    )
    return table


_TOWNS = ("Kelsby", "Harwick", "Millport", "Sandby", "Easton", "Crane", "Dunmoor", "Ashby")


def table_across_pdf(shuffled: bool = False) -> Sample:
    """Two columns, a table across the whole page, two more columns: a report's page."""
    upper, lower = paragraphs(231, 3), paragraphs(232, 3)
    rows = [["Year", "Town", "Repair", "Cost", "Engineer"]]
    for n, town in enumerate(_TOWNS):
        rows.append(
            [
                str(1990 + 3 * n),
                town,
                sentences(233 + n, 1)[0].split()[0],
                f"{(n + 2) * 170}",
                "A. Keeper",
            ]
        )
    table = _table(rows, [60, 90, 90, 60, 120])
    height = 26 + 16 * len(rows)
    middle = HEIGHT / 2 + 60
    areas = [
        *_columns(2, HEIGHT - MARGIN, middle + 12, 0),
        Area(MARGIN, middle - height, WIDTH - 2 * MARGIN, height, 1),
        *_columns(2, middle - height - 12, MARGIN, 2),
    ]
    order = [2, 1, 4, 0, 3] if shuffled else [0, 1, 2, 3, 4]
    name = "table-across-shuffled.pdf" if shuffled else "table-across.pdf"
    data = laid_out(areas, [_body(upper), [table], _body(lower)], order)
    return _sample(name, data, [*upper, *(" ".join(r) for r in rows), *lower])


def table_in_column_pdf() -> Sample:
    """Two columns in order, the left one holding a small table between its paragraphs."""
    texts = paragraphs(241, 6)
    rows = [
        ["Year", "Repair", "Cost"],
        *([str(2000 + n), f"pier {n}", f"{n * 40 + 90}"] for n in range(6)),
    ]
    story = [*_body(texts[:2]), _table(rows), *_body(texts[2:])]
    areas = _columns(2, HEIGHT - MARGIN, MARGIN)
    data = laid_out(areas, [story], [0, 1])
    return _sample(
        "table-in-column.pdf", data, [*texts[:2], *(" ".join(r) for r in rows), *texts[2:]]
    )


def running_heads_pdf(in_order: bool = False) -> Sample:
    """Two columns under a running head in two parts, a page number below: drawn in order,
    or the footer first, the right column before the left and the head last."""
    from reportlab.platypus import Paragraph

    fonts()
    head = ["Kelsby Harbour Review", "Spring issue"]
    texts = paragraphs(251, 8)
    small = styles(8)
    right_aligned = styles(8)
    right_aligned.alignment = 2
    areas = [
        Area(MARGIN, HEIGHT - MARGIN + 6, 200, 16, 0),
        Area(WIDTH - MARGIN - 200, HEIGHT - MARGIN + 6, 200, 16, 1),
        *_columns(2, HEIGHT - MARGIN, MARGIN + 20, 2),
        Area(WIDTH / 2 - 20, MARGIN - 10, 40, 16, 3),
    ]
    centred = styles(8)
    centred.alignment = 1
    stories: list[list[Flowable]] = [
        [Paragraph(head[0], small)],
        [Paragraph(head[1], right_aligned)],
        _body(texts),
        [Paragraph("7", centred)],
    ]
    order = [0, 1, 2, 3, 4] if in_order else [4, 3, 2, 0, 1]
    name = "running-heads.pdf" if in_order else "running-heads-shuffled.pdf"
    return _sample(name, laid_out(areas, stories, order), [*head, *texts, "7"])


def definitions_pdf() -> Sample:
    """One column with a two-column table of terms and their sentence-long definitions."""
    intro, outro = paragraphs(261, 2)
    terms = ["pivot", "ledger", "lock gate", "swing span", "pier"]
    rows = [[t, " ".join(sentences(262 + n, 2))] for n, t in enumerate(terms)]
    from reportlab.platypus import Paragraph

    cells = [[Paragraph(t, styles(9)), Paragraph(d, styles(9))] for t, d in rows]
    story = [*_body([intro]), _table(cells, [90, 380]), *_body([outro])]
    data = laid_out([Area(MARGIN, MARGIN, WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN)], [story], [0])
    return _sample("definitions.pdf", data, [intro, *(" ".join(r) for r in rows), outro])


def line_by_line_pdf() -> Sample:
    """Two columns drawn one line across the page at a time (left line, right line, ...)."""
    from reportlab.pdfgen.canvas import Canvas

    left = _lines(paragraphs(271, 2)[0] + " " + paragraphs(272, 1)[0], 52)
    right = _lines(" ".join(paragraphs(273, 2)), 52)
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(WIDTH, HEIGHT), invariant=True)
    canvas.setFont("Helvetica", 9)
    for n in range(max(len(left), len(right))):
        for x, lines in ((MARGIN, left), (WIDTH / 2 + 9, right)):
            if n < len(lines):
                canvas.drawString(x, HEIGHT - MARGIN - 12 * n, lines[n])
    canvas.showPage()
    canvas.save()
    return Sample("line-by-line.pdf", out.getvalue(), (" ".join(left) + "\n" + " ".join(right),))


def _lines(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, broken at spaces."""
    return textwrap.wrap(text, width, break_long_words=False)


def right_drawn_first_pdf() -> Sample:
    """Two columns of hand-set lines (a hyphenated word in each), the right column drawn
    first."""
    from reportlab.pdfgen.canvas import Canvas

    left, right = wrap(paragraphs(141, 1)[0], 40), wrap(paragraphs(142, 1)[0], 40)
    out = io.BytesIO()
    canvas = Canvas(out, invariant=True)
    canvas.setFont("Helvetica", 9)
    for x, lines in ((320, right), (60, left)):
        for n, line in enumerate(lines):
            canvas.drawString(x, 780 - 12 * n, line)
    canvas.showPage()
    canvas.save()
    return Sample("out-of-order.pdf", out.getvalue(), (_unwrap(left) + " " + _unwrap(right),))


def _unwrap(lines: list[str]) -> str:
    """The text of wrapped lines: a hyphen at a line's end joins the word it split."""
    return "".join(line[:-1] if line.endswith("-") else line + " " for line in lines).strip()


def random_pdf(seed: int) -> tuple[Sample, bool]:
    """A page of a random layout, and whether it was drawn in reading order.

    1-3 columns (gutters 10-30 pt) of 8-11 pt text, left-aligned or justified, with
    headings, small tables and paragraph spacing; a title across the page half the time;
    the frames drawn in order or shuffled, half the time each. What fills the page is kept.
    """
    from reportlab.pdfgen.canvas import Canvas
    from reportlab.platypus import Paragraph

    rng = random.Random(seed)
    fonts()
    count, size = rng.choice([1, 2, 2, 3]), rng.choice([8, 9, 10, 11])
    story: list[tuple[Flowable, str]] = []
    for n in range(40):
        kind = rng.random()
        if kind < 0.12:
            heading = " ".join(sentences(seed * 100 + n, 1)[0].split()[: rng.randint(1, 4)])
            story.append((Paragraph(heading, styles(size + 3)), heading))
        elif kind < 0.17 and count < 3:
            rows = [
                [str(rng.randint(1, 999)), rng.choice(["pier", "lock", "gate"]), str(n)]
                for _ in range(rng.randint(3, 6))
            ]
            story.append((_table(rows), "\n".join(" ".join(r) for r in rows)))
        else:
            text = paragraphs(seed * 100 + n, 1, per=rng.randint(1, 4))[0]
            style = styles(size)
            style.spaceAfter, style.alignment = rng.choice([0, 0, 3, 6]), rng.choice([0, 4])
            story.append((Paragraph(text, style), text))
    top = HEIGHT - MARGIN
    head: list[tuple[Flowable, str]] = []
    areas: list[Area] = []
    if rng.random() < 0.5:
        title = f"Report on the harbour, number {seed}"
        head = [(Paragraph(title, styles(16)), title)]
        areas.append(Area(MARGIN, top - 40, WIDTH - 2 * MARGIN, 40, 1))
        top -= 52
    areas += _columns(count, top, MARGIN, 0, rng.choice([10, 14, 18, 24, 30]))
    queue = [f for f, _ in story]
    scratch = Canvas(io.BytesIO())
    for area in (a for a in areas if a.story == 0):
        _fill(_frame(area), queue, scratch)
    kept = story[: len(story) - len(queue)]  # a paragraph split at the page's end is dropped
    order = list(range(len(areas)))
    in_order = rng.random() < 0.5 or len(areas) < 2
    while not in_order and order == sorted(order):
        rng.shuffle(order)
    stories = [[f for f, _ in kept], [f for f, _ in head]]
    data = laid_out(areas, stories, order)
    texts = [t for _, t in head] + [t for _, t in kept]
    return _sample(f"random-{seed}.pdf", data, texts), in_order


def layout_samples() -> list[Sample]:
    return [
        columns_pdf(),
        columns_pdf(right_first=True),
        right_drawn_first_pdf(),
        line_by_line_pdf(),
        title_columns_pdf(),
        title_columns_pdf(title_last=True),
        three_columns_pdf(),
        three_columns_pdf(shuffled=True),
        table_across_pdf(),
        table_across_pdf(shuffled=True),
        table_in_column_pdf(),
        running_heads_pdf(in_order=True),
        running_heads_pdf(),
        definitions_pdf(),
    ]
