"""Reading order of PDF pages: the layout rules on boxes, then real pages drawn in and out of
reading order (reportlab, and chromium when installed), read by the PDF reader.

Every out-of-order page here read 0.50-0.87 of its text in order before the layout step
(PDFium's drawing order: ``bench/documents.py``'s "as drawn" column).
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Callable

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pytest
from rapidfuzz import fuzz

from local2.documents._layout import Box, reading_regions
from local2.documents._model import Limits
from local2.documents._pdf import page_text, read_in_order, read_pdf
from local2_testkit import pdf_layouts as layouts
from local2_testkit.browser_pdfs import CHROMIUM, browser_samples
from local2_testkit.documents import Sample, fonts


def words(text: str) -> str:
    return " ".join(text.split())


def column(left: float, top: float, lines: int, width: float = 230) -> list[Box]:
    """A column of prose: full lines 10 pt high every 13 pt, the last one short."""
    boxes = []
    for n in range(lines):
        right = left + (width if n < lines - 1 else width / 3)
        boxes.append((left, top - 13 * n - 10, right, top - 13 * n))
    return boxes


LEFT, RIGHT = column(56, 780, 30), column(310, 780, 30)


def test_columns_drawn_in_order_keep_pdfiums_order() -> None:
    assert reading_regions(LEFT + RIGHT) is None


def test_right_column_drawn_first_is_read_after_the_left() -> None:
    regions = reading_regions(RIGHT + LEFT)
    assert regions is not None and len(regions) == 2
    assert regions[0][0] == 56 and regions[1][0] == 310


def test_columns_drawn_line_by_line_across_are_read_column_by_column() -> None:
    interleaved = [box for pair in zip(LEFT, RIGHT, strict=True) for box in pair]
    regions = reading_regions(interleaved)
    assert regions is not None and [r[0] for r in regions] == [56, 310]


def test_a_title_across_the_columns_drawn_last_is_read_first() -> None:
    title = (56, 820, 480, 836)
    regions = reading_regions([*LEFT, *RIGHT, title])
    assert regions is not None
    assert regions[0] == title and [r[0] for r in regions[1:]] == [56, 310]


def test_three_columns_shuffled() -> None:
    columns = [column(56 + 165 * n, 780, 40, width=150) for n in range(3)]
    regions = reading_regions(columns[1] + columns[2] + columns[0])
    assert regions is not None and [r[0] for r in regions] == [56, 221, 386]


def table(top: float, rows: int, lefts: tuple[float, ...]) -> list[Box]:
    """A table's cells, row by row: short pieces of text starting at ``lefts``."""
    return [(x, top - 16 * r - 10, x + 30, top - 16 * r) for r in range(rows) for x in lefts]


def test_a_table_drawn_row_by_row_is_not_taken_for_columns() -> None:
    cells = table(700, 20, (60, 160, 260, 360, 460))
    assert reading_regions(cells) is None
    by_column = sorted(cells, key=lambda b: (b[0], -b[3]))  # even drawn column by column
    assert reading_regions(by_column) is None


def test_a_table_in_one_column_beside_the_other_columns_prose() -> None:
    """Table rows with a line of the other column beside them are not a table across."""
    left = column(56, 780, 12) + table(610, 8, (80, 140, 200)) + column(56, 480, 15)
    assert reading_regions(left + RIGHT) is None
    regions = reading_regions(RIGHT + left)
    assert regions is not None and [r[0] for r in regions] == [56, 310]


def test_a_table_across_the_page_splits_the_columns_above_and_below() -> None:
    upper = column(56, 780, 10) + column(310, 780, 10)
    cells = table(630, 8, (60, 150, 240, 330, 420))  # a cell gap falls in the gutter
    lower = column(56, 480, 12), column(310, 480, 12)
    drawn = [*cells, *lower[1], *upper[10:], *lower[0], *upper[:10]]
    regions = reading_regions(drawn)
    assert regions is not None
    assert [(round(r[0]), round(r[3])) for r in regions] == [
        (56, 780),
        (310, 780),
        (60, 630),
        (56, 480),
        (310, 480),
    ]


def test_notes_beside_code_are_not_a_second_column() -> None:
    code = [(120, 700 - 12 * n - 9, 300, 700 - 12 * n) for n in range(45)]
    notes = [(335, 600 - 120 * n - 9, 450, 600 - 120 * n) for n in range(3)]
    by_height = sorted(code + notes, key=lambda b: -b[3])  # drawn line by line
    assert reading_regions(by_height) is None


def test_running_head_in_two_parts_drawn_last_opens_the_page() -> None:
    head = [(56, 800, 150, 808), (480, 800, 540, 808)]
    regions = reading_regions([*RIGHT, *LEFT, *head])
    assert regions is not None
    assert regions[0][1] == 800 and [round(r[0]) for r in regions[1:]] == [56, 310]


def test_right_to_left_scripts_read_the_right_column_first() -> None:
    assert reading_regions(RIGHT + LEFT, right_to_left=True) is None
    regions = reading_regions(LEFT + RIGHT, right_to_left=True)
    assert regions is not None and [r[0] for r in regions] == [310, 56]


def test_a_hebrew_page_drawn_right_column_first_is_kept() -> None:
    from reportlab.pdfgen.canvas import Canvas

    fonts()
    vocabulary = [
        "גשר",
        "נמל",
        "עיר",
        "מועצה",
        "מהנדס",
        "תיקון",
        "חורף",
        "אביב",
        "קיץ",
        "ברזל",
        "אבן",
        "גאות",
        "טחנה",
    ]
    out = io.BytesIO()
    canvas = Canvas(out)
    canvas.setFont("DejaVu", 10)
    for x in (310, 56):
        for n in range(30):
            line = " ".join(vocabulary[(n * 7 + k + x) % len(vocabulary)] for k in range(7))
            canvas.drawString(x, 780 - 13 * n, line)
    canvas.showPage()
    canvas.save()
    textpage = pdfium.PdfDocument(out.getvalue())[0].get_textpage()
    assert read_in_order(textpage) == textpage.get_text_bounded()


def test_too_little_or_too_much_text_is_left_alone() -> None:
    assert reading_regions([(310, 700, 500, 710), (56, 700, 250, 710)]) is None
    assert reading_regions([]) is None
    assert reading_regions((RIGHT + LEFT) * 400) is None  # 24,000 rectangles: as drawn


def as_drawn(sample: Sample) -> str:
    """The page's text in PDFium's drawing order, as the reader gave it before."""
    pdf = pdfium.PdfDocument(sample.data)
    text = page_text(pdf[0].get_textpage().get_text_bounded())
    pdf.close()
    return text


def quality(text: str, sample: Sample) -> float:
    return fuzz.ratio(words(text), words(sample.text)) / 100


@pytest.mark.parametrize("sample", layouts.layout_samples(), ids=lambda s: s.name)
def test_layout_pages_read_in_reading_order(sample: Sample) -> None:
    [page] = read_pdf(sample.data, Limits()).pages
    assert words(page.text) == words(sample.text)


@pytest.mark.parametrize(
    "make",
    [
        layouts.right_drawn_first_pdf,
        lambda: layouts.columns_pdf(right_first=True),
        layouts.line_by_line_pdf,
        lambda: layouts.title_columns_pdf(title_last=True),
        lambda: layouts.three_columns_pdf(shuffled=True),
        lambda: layouts.table_across_pdf(shuffled=True),
        layouts.running_heads_pdf,
    ],
)
def test_out_of_order_pages_were_scrambled_as_drawn(make: Callable[[], Sample]) -> None:
    """The samples above that test ordering really are out of order for PDFium alone."""
    assert quality(as_drawn(make()), make()) < 0.9


def test_random_layouts_drawn_in_order_are_kept_and_out_of_order_mended() -> None:
    kept, mended, drawn = 0, [], []
    in_order = 0
    for seed in range(60):
        sample, ordered = layouts.random_pdf(seed)
        text = read_pdf(sample.data, Limits()).pages[0].text
        if ordered:
            in_order += 1
            kept += text == as_drawn(sample)
        else:
            mended.append(quality(text, sample))
            drawn.append(quality(as_drawn(sample), sample))
    assert in_order >= 20 and len(mended) >= 20
    assert kept >= in_order - 1  # one page in 60 may differ (two tables side by side)
    assert statistics.mean(drawn) < 0.8 and statistics.mean(mended) >= 0.98


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_pages_printed_by_chromium() -> None:
    """A writer that places glyph runs (a rectangle per word or glyph) reads as well."""
    for sample in browser_samples():
        [page] = read_pdf(sample.data, Limits()).pages
        assert words(page.text) == words(sample.text), sample.name
