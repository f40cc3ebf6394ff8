"""Reading order of a PDF page from where its text sits: columns found by their gutters.

PDFium gives a page's text in the order the file draws it. Most writers draw in reading
order, but some draw the right column first, the title last, or a page line by line across
its columns; a multi-column page then comes out scrambled (0.52 against the text written,
``bench/documents.py``). PDFium has no layout analysis, so this module does a small one on
the page's text rectangles (``FPDFText_GetRect``: a run of characters on one line, or one
glyph for writers that place each glyph):

1. rectangles are joined into lines, and a line into segments at gaps wider than a word
   space (a column's line, a table cell, a heading);
2. a gutter is a vertical strip at least ``GUTTER_EM`` line heights wide that few segments
   cross; the few that do (a title, a full-width table, a centred page number), the rows of
   a table laid across the columns, and a running head or foot set apart at the top or
   bottom are read where they sit, between the stretches of columns above and below;
3. a stretch of rows is read column by column only when at least two of its columns hold
   prose (enough lines filling a wide column, top to bottom); a table's cells, or notes
   beside code, do not, and are read as drawn.

:func:`reading_regions` gives the regions in reading order, or ``None`` when the page has
one region or PDFium's order already reads the regions one after another in that order:
then the page's text is PDFium's, unchanged, so a page this analysis misjudges is only
changed when PDFium's own order disagrees with it. Pure functions of the boxes, tested
with boxes as well as PDFs (``tests/documents/test_documents_layout.py``).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points (y up)
Strip = tuple[float, float]  # a gutter: from x to x

# Lengths are in line heights (a line of text is ~1.15 em high; a word space ~0.3 em).
GUTTER_EM = 0.75  # the narrowest gutter, and the widest gap inside a segment
PROSE_WIDTH_EM = 8.0  # a column of prose is at least this wide
PROSE_FILL = 0.6  # a full line fills this share of its column; a third of lines are full
PROSE_DENSITY = 0.4  # a column's lines cover this share of its height (not a few notes)
PROSE_LINES = 2  # a column of prose has this many lines, and one of two has two more
HEAD_GAP_EM = 1.2  # a running head or foot stands this far clear of the text
ALIGN_EM = 0.2  # the cells of one table row are level to within this
INDENT_EM = 2.5  # a column's line starts at most this far right of the column's edge
MIN_BOXES = 6  # fewer words than this: nothing to arrange
MAX_BOXES = 20_000  # more text rectangles than this: not a page of columns (left as drawn)
MAX_REGIONS = 64  # more regions than this: not a page of columns either
MAX_DEPTH = 3  # a stretch of full-width rows is searched again for columns of its own
MAX_LEVELS = 8  # gutter sets tried, by how many segments may cross them


@dataclass
class Segment:
    """Text on one line with no gutter-wide gap inside: ``members`` are rectangle indices."""

    left: float
    bottom: float
    right: float
    top: float
    members: list[int] = field(default_factory=list)

    @property
    def width(self) -> float:
        return self.right - self.left

    def add(self, index: int, box: Box) -> None:
        self.left = min(self.left, box[0])
        self.bottom = min(self.bottom, box[1])
        self.right = max(self.right, box[2])
        self.top = max(self.top, box[3])
        self.members.append(index)


Row = list[Segment]  # the segments of one line of the page, left to right
Line = tuple[float, float, list[tuple[int, Box]]]  # top, bottom, and its boxes with indices
Placed = list[tuple[int, Segment]]  # a row's segments with their column (-1: crossing)


def reading_regions(boxes: Sequence[Box], right_to_left: bool = False) -> list[Box] | None:
    """The page's regions in reading order, or ``None`` when PDFium's order needs no change.

    ``boxes`` are the page's text rectangles in PDFium's order; columns are read from the
    right when the page's script is written ``right_to_left`` (Hebrew, Arabic).
    """
    if len(boxes) > MAX_BOXES:
        return None
    usable = _words(boxes)
    if len(usable) < MIN_BOXES:
        return None
    lines = _lines(usable)
    glyph = statistics.median(b[3] - b[1] for _, b in usable)  # a line's, or a letter's
    pieces = [s for _, _, line in lines for s in _segments(line, glyph)]
    height = statistics.median(s.top - s.bottom for s in pieces)  # a line of text's
    rows = [_segments(line, GUTTER_EM * height) for _, _, line in lines]
    regions = _arrange(rows, height, 0, right_to_left)
    if not 2 <= len(regions) <= MAX_REGIONS:
        return None
    region_of = {i: k for k, region in enumerate(regions) for s in region for i in s.members}
    order = [region_of[i] for i in sorted(region_of)]
    if all(a <= b for a, b in itertools.pairwise(order)):
        return None
    return [_bounds(region) for region in regions]


def _words(boxes: Sequence[Box]) -> list[tuple[int, Box]]:
    """Boxes that follow each other on a line, close together, joined (a writer that places
    each glyph gives a rectangle per glyph), each with the index of its first box."""
    out: list[tuple[int, Box]] = []
    for index, (left, bottom, right, top) in enumerate(boxes):
        if right <= left or top <= bottom:
            continue
        if out:
            first, (l0, b0, r0, t0) = out[-1]
            overlap = min(top, t0) - max(bottom, b0)
            close = -0.1 * (t0 - b0) <= left - r0 <= 0.25 * max(top - bottom, t0 - b0)
            if close and overlap >= 0.5 * min(top - bottom, t0 - b0):
                out[-1] = (first, (l0, min(bottom, b0), right, max(top, t0)))
                continue
        out.append((index, (left, bottom, right, top)))
    return out


def _lines(boxes: list[tuple[int, Box]]) -> list[Line]:
    """The boxes grouped into lines of text, top to bottom, as (top, bottom, boxes).

    A box joins the line whose span holds its centre. Boxes may be whole lines or single
    glyphs (tight boxes: a comma's is low, a capital's tall), so a line's span grows with
    its boxes, but not by a box taller than twice the typical one (a bracket, a formula).
    """
    typical = statistics.median(b[3] - b[1] for _, b in boxes)
    lines: list[Line] = []
    for index, box in sorted(boxes, key=lambda ib: -(ib[1][1] + ib[1][3])):
        middle = (box[1] + box[3]) / 2
        if lines and lines[-1][1] <= middle <= lines[-1][0]:
            top, bottom, members = lines[-1]
            members.append((index, box))
            if box[3] - box[1] <= 2 * typical:
                lines[-1] = (max(top, box[3]), min(bottom, box[1]), members)
        else:
            lines.append((box[3], box[1], [(index, box)]))
    return lines


def _segments(line: list[tuple[int, Box]], gap: float) -> Row:
    """A line's boxes left to right, joined into segments where less than ``gap`` apart."""
    row: Row = []
    for index, box in sorted(line, key=lambda ib: ib[1][0]):
        if row and box[0] - row[-1].right < gap:
            row[-1].add(index, box)
        else:
            row.append(Segment(box[0], box[1], box[2], box[3], [index]))
    return row


def _arrange(rows: list[Row], height: float, depth: int, rtl: bool) -> list[list[Segment]]:
    """The rows' segments grouped into regions in reading order."""
    segments = [s for row in rows for s in row]
    for gutters in _gutter_sets(segments, height):
        regions = _by_columns(rows, gutters, height, depth, rtl)
        if regions is not None:
            return regions
    return [segments]


def _gutter_sets(segments: list[Segment], height: float) -> list[list[Strip]]:
    """Candidate gutter sets, fewest crossing segments first.

    Each is every vertical strip, at least a gutter wide and inside the text, crossed by at
    most ``k`` segments, for the smallest few ``k`` that give one (at most half the
    segments may cross: beyond that the strip is a gap in a minority of lines).
    """
    left = min(s.left for s in segments)
    right = max(s.right for s in segments)
    cover = _coverage(segments)
    levels = sorted({count for x0, x1, count in cover if x0 > left and x1 < right})
    out: list[list[Strip]] = []
    seen: set[tuple[Strip, ...]] = set()
    for k in levels[:MAX_LEVELS]:
        if k * 2 > len(segments):
            break
        strips = _strips(cover, k, left, right, GUTTER_EM * height)
        key = tuple(strips)
        if strips and key not in seen:
            seen.add(key)
            out.append(strips)
    return out


def _coverage(segments: list[Segment]) -> list[tuple[float, float, int]]:
    """How many segments cover each stretch of x, as (from, to, count), left to right."""
    events = sorted([(s.left, 1) for s in segments] + [(s.right, -1) for s in segments])
    out: list[tuple[float, float, int]] = []
    count = 0
    for (x, step), (following, _) in itertools.pairwise(events):
        count += step
        if following > x:
            out.append((x, following, count))
    return out


def _strips(
    cover: list[tuple[float, float, int]], k: int, left: float, right: float, width: float
) -> list[Strip]:
    """Runs of x covered at most ``k`` times, ``width`` wide or more, text on both sides."""
    strips: list[Strip] = []
    start: float | None = None
    end = left
    for x0, x1, count in cover:
        if count <= k:
            start = x0 if start is None else start
            end = x1
            continue
        if start is not None and end - start >= width and start > left:
            strips.append((start, end))
        start = None
    if start is not None and end - start >= width and start > left and end < right:
        strips.append((start, end))
    return strips


def _by_columns(
    rows: list[Row], gutters: list[Strip], height: float, depth: int, rtl: bool
) -> list[list[Segment]] | None:
    """Regions read column by column between full-width rows; ``None`` when no stretch of
    rows has two columns of prose (the strips were gaps in a table, or margins)."""
    middles = sorted((a + b) / 2 for a, b in gutters)
    columns = list(zip([-float("inf"), *middles], [*middles, float("inf")], strict=True))
    placed = [_place(row, columns) for row in rows]
    spanning = _spanning(placed, height)
    segments = [s for row in rows for s in row]
    width = (max(s.right for s in segments) - min(s.left for s in segments)) / len(columns)
    for end, neighbour in ((0, 1), (-1, -2)):
        if len(rows) > 2 and _running_head(rows[end], rows[neighbour], width, height):
            spanning[end] = True
    regions: list[list[Segment]] = []
    found = False
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and spanning[end] == spanning[start]:
            end += 1
        stretch = rows[start:end]
        if spanning[start]:
            if depth < MAX_DEPTH and len(stretch) < len(rows):
                regions += _arrange(stretch, height, depth + 1, rtl)
            else:
                regions.append([s for row in stretch for s in row])
        else:
            per_column = _columns_of(placed[start:end], len(columns))
            if _prose_columns(per_column, height) >= 2:
                found = True
                regions += [c for c in (per_column[::-1] if rtl else per_column) if c]
            else:
                regions.append([s for row in stretch for s in row])
        start = end
    return regions if found else None


def _place(row: Row, columns: list[tuple[float, float]]) -> Placed:
    """Each segment with the column it sits in, or -1 when it crosses a gutter."""
    placed: Placed = []
    for segment in row:
        column = -1
        for n, (a, b) in enumerate(columns):
            if segment.left >= a and segment.right <= b:
                column = n
                break
        placed.append((column, segment))
    return placed


def _running_head(row: Row, neighbour: Row, width: float, height: float) -> bool:
    """A first or last row of short pieces set apart from the rest: a running head or foot
    ("Journal of X ... page 7", a page number in a corner), read across the page."""
    if any(s.width > PROSE_FILL * width for s in row):
        return False
    gap = max(
        min(s.bottom for s in row) - max(s.top for s in neighbour),
        min(s.bottom for s in neighbour) - max(s.top for s in row),
    )
    return gap >= HEAD_GAP_EM * height


def _spanning(placed: list[Placed], height: float) -> list[bool]:
    """Rows read across the page: a segment crossing a gutter, or rows of a table laid
    across the columns, two or more in a row."""
    edges: dict[int, float] = {}
    for row in placed:
        for column, segment in row:
            edges[column] = min(edges.get(column, segment.left), segment.left)
    out = [any(c < 0 for c, _ in row) for row in placed]
    tabular = [_table_row(row, edges, height) for row in placed]
    for n, is_table in enumerate(tabular):
        before = n > 0 and tabular[n - 1]
        after = n + 1 < len(tabular) and tabular[n + 1]
        if is_table and (before or after):
            out[n] = True
    return out


def _table_row(row: Placed, edges: dict[int, float], height: float) -> bool:
    """Cells of a table across the columns: two or more pieces in one column, and in another,
    on the same line, two or more as well or one that does not start where that column's
    lines do. (A table inside one column, beside the other column's line, is not one.)"""
    pieces: dict[int, list[Segment]] = {}
    for column, segment in row:
        pieces.setdefault(column, []).append(segment)
    for column, segments in pieces.items():
        if len(segments) < 2:
            continue
        for other, beside in pieces.items():
            if other == column or not _level(segments[0], beside[0], height):
                continue  # two tables side by side rarely share their lines
            if len(beside) > 1 or beside[0].left - edges[other] > INDENT_EM * height:
                return True
    return False


def _level(a: Segment, b: Segment, height: float) -> bool:
    """On the same line: the tops or the bottoms within ``ALIGN_EM`` line heights."""
    limit = ALIGN_EM * height
    return abs(a.top - b.top) <= limit or abs(a.bottom - b.bottom) <= limit


def _columns_of(placed: list[Placed], count: int) -> list[list[Segment]]:
    columns: list[list[Segment]] = [[] for _ in range(count)]
    for row in placed:
        for column, segment in row:
            columns[column].append(segment)
    return columns


def _prose_columns(columns: list[list[Segment]], height: float) -> int:
    """How many of the columns hold prose: enough lines, wide, most lines filling the width,
    and lines filling the column's height (a few notes beside code or a table do not)."""
    if max(len(c) for c in columns) < PROSE_LINES + 2:
        return 0
    return sum(_is_prose(segments, height) for segments in columns)


def _is_prose(segments: list[Segment], height: float) -> bool:
    if len(segments) < PROSE_LINES:
        return False
    left, bottom, right, top = _bounds(segments)
    if right - left < PROSE_WIDTH_EM * height:
        return False
    full = sum(s.width >= PROSE_FILL * (right - left) for s in segments)
    if full < max(PROSE_LINES, len(segments) / 3):  # a table in a column may be most of it
        return False
    return _covered(segments) >= PROSE_DENSITY * (top - bottom)


def _covered(segments: list[Segment]) -> float:
    """How much of the height the segments cover (overlaps counted once)."""
    covered, reach = 0.0, float("inf")
    for segment in sorted(segments, key=lambda s: -s.top):
        top = min(segment.top, reach)
        if top > segment.bottom:
            covered += top - segment.bottom
        reach = min(reach, segment.bottom)
    return covered


def _bounds(segments: list[Segment]) -> Box:
    return (
        min(s.left for s in segments),
        min(s.bottom for s in segments),
        max(s.right for s in segments),
        max(s.top for s in segments),
    )
