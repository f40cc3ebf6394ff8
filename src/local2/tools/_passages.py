"""Query-focused page text: the passages of a long web page most relevant to the question.

Cutting a page at its first few thousand characters drops the answer whenever it sits
further down. Instead the page's best passages for the question (the person's query plus
what the model asked for) that fit the budget are shown in page order, gaps marked, with a
closing note of what was left out; the picking is :mod:`local2.retrieval._relevance`', which
documents of many pages use too. A page that fits the budget is shown whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from local2.documents import GAP, truncate_paragraphs
from local2.retrieval import choose, relevance, split_passages


@dataclass(frozen=True)
class Focused:
    """What the model is shown of a page, and how much was left out."""

    text: str
    passages_shown: int
    passages_total: int
    chars_shown: int  # page characters shown (gap markers and the note not counted)
    chars_total: int

    @property
    def whole(self) -> bool:
        return self.passages_shown == self.passages_total


def focus(text: str, question: str, budget: int) -> Focused:
    """The page whole when it fits ``budget`` chars, else its most relevant passages."""
    if len(text) <= budget:
        count = len(split_passages(text)) if text else 0
        return Focused(text, count, count, len(text), len(text))
    passages = split_passages(text)
    scores = relevance(passages, question)
    room = budget - _NOTE_RESERVE
    chosen = set(choose([len(p) + len(GAP) + 2 for p in passages], scores, room))
    if not chosen:  # one passage larger than the whole budget: show its head
        first = max(range(len(passages)), key=lambda i: (scores[i], -i))
        passages[first] = truncate_paragraphs(passages[first], max(room - len(GAP) - 2, 1), "")
        chosen.add(first)
    shown = sum(len(passages[i]) for i in chosen)
    how = (
        "chosen for relevance to the question and kept in page order"
        if any(scores)
        else "from the top (nothing on the page matched the question's words)"
    )
    note = (
        f"\n[Page shortened to fit the context: {len(chosen)} of {len(passages)} passages shown "
        f"({shown:,} of {len(text):,} characters), {how}; {GAP} marks left-out text. To read "
        f"other parts, call web_fetch again with a `query` naming what you are looking for.]"
    )
    return Focused(_join(passages, chosen) + note, len(chosen), len(passages), shown, len(text))


_NOTE_RESERVE = 360  # room kept for the closing note


def _join(passages: list[str], chosen: set[int]) -> str:
    parts: list[str] = []
    previous = -1
    for i in sorted(chosen):
        if i != previous + 1:
            parts.append(GAP)
        parts.append(passages[i])
        previous = i
    if previous != len(passages) - 1:
        parts.append(GAP)
    return "\n".join(parts)
