"""Evidence recall: which gold evidence sentences reached the model, and so whether a wrong
answer had its evidence in front of it ("found, misread") or never did ("never found").

What reached the model is every text it was given during the answer: tool results (search
hits, read pages and documents), recalled memories and document hits. A gold sentence
*reached* it when:

- **whole**: its words, in order, appear in one of those texts; words are compared after
  Unicode NFKC and case folding, with punctuation and whitespace ignored, so line breaks,
  a different quote mark or a hyphen at a line end do not matter;
- **cut**: the text was cut inside it (at a ``…``/``[…]``/``...`` marker, or at the text's
  start, or at its end when that is not a sentence's end: a snippet cut short, a page shown
  in passages) and the piece shown, running up to the cut, is at least half its words and
  at least four words.

Nothing else counts: a paraphrase is not the sentence. A question's recall is the share of
its gold sentences that reached the model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from local2.contracts import Diagnosis, EvidenceItem, EvidenceReport, GradeName
from local2.retrieval import ends_sentence, words

MIN_CUT_WORDS = 4
MIN_CUT_SHARE = 0.5
_CUT = re.compile(r"\[\s*(?:…|\.\.\.)\s*\]|…|\.\.\.")


@dataclass(frozen=True)
class Reached:
    """One text the model was given, and where it came from (``tool:web_fetch``, ``memory``)."""

    source: str
    text: str


class _Seen:
    """A reached text, prepared: its pieces between cuts, as words."""

    def __init__(self, reached: Reached) -> None:
        self.source = reached.source
        raw = _CUT.split(reached.text)
        self.pieces = [words(piece) for piece in raw]
        # A piece cut by a marker ends open; the text's own end only when no sentence ends there.
        self.open_end = [True] * (len(raw) - 1) + [not ends_sentence(raw[-1])]
        self.joined = "\n".join(f" {' '.join(p)} " for p in self.pieces)

    def has_whole(self, gold: list[str]) -> bool:
        return f" {' '.join(gold)} " in self.joined

    def has_cut(self, gold: list[str]) -> bool:
        """A piece ends with the gold's first words, or starts with its last ones."""
        if len(gold) < MIN_CUT_WORDS:
            return False
        need = max(MIN_CUT_WORDS, math.ceil(MIN_CUT_SHARE * len(gold)))
        for piece, open_end in zip(self.pieces, self.open_end, strict=True):
            longest = min(len(piece), len(gold) - 1)
            for size in range(longest, need - 1, -1):
                if piece[:size] == gold[-size:] or (open_end and piece[-size:] == gold[:size]):
                    return True
        return False


def evidence_recall(gold: Sequence[str], reached: Sequence[Reached]) -> EvidenceReport:
    """Which of ``gold`` reached the model through ``reached`` (earliest source named)."""
    seen = [_Seen(r) for r in reached]
    items: list[EvidenceItem] = []
    for sentence in gold:
        wanted = words(sentence)
        whole = next((s for s in seen if wanted and s.has_whole(wanted)), None)
        cut = None if whole else next((s for s in seen if s.has_cut(wanted)), None)
        where = whole or cut
        items.append(
            EvidenceItem(
                text=sentence,
                reached=where is not None,
                how="whole" if whole else ("cut" if cut else None),
                source=where.source if where else None,
            )
        )
    found = sum(1 for i in items if i["reached"])
    total = len(items)
    return EvidenceReport(
        found=found, total=total, recall=found / total if total else 0.0, items=items
    )


def diagnose(grade: GradeName | None, report: EvidenceReport | None) -> Diagnosis | None:
    """For an answer not graded correct: did its evidence reach the model? ``found_misread``
    only when every gold sentence did; ``never_found`` when none did."""
    if grade is None or grade == "correct" or report is None or report["total"] == 0:
        return None
    if report["found"] == report["total"]:
        return "found_misread"
    return "never_found" if report["found"] == 0 else "partly_found"


def reached_from_turn(
    tool_calls: Iterable[Mapping[str, Any]],
    memory_hits: Iterable[Mapping[str, Any]] = (),
    document_hits: Iterable[str] = (),
) -> list[Reached]:
    """What a turn gave the model: each tool call's result (failed calls gave none), each
    recalled memory and each document hit."""
    reached = [
        Reached(f"tool:{call.get('tool')}", str(call.get("result") or ""))
        for call in tool_calls
        if not call.get("error") and call.get("result")
    ]
    reached += [Reached("memory", str(hit.get("content") or "")) for hit in memory_hits]
    reached += [Reached("document", text) for text in document_hits]
    return reached
