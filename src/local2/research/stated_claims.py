"""The claims a finished report makes, read back from its Markdown: each sentence that states
something (:mod:`.claims`), without its citation marks, with the sources it cites.

A watch compares two runs' reports by these (``local2.watch.changes``). The report is the
verified text under the question's heading; its "References" and "Removed as unsupported"
sections are the run's own lists, not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from local2.research.claims import is_heading, not_a_claim
from local2.research.verify import CITATION, cited_numbers, lines_of, split_sentences

# The sections report_markdown adds after the verified text.
_OWN_SECTIONS = re.compile(r"^#{1,6}\s+(?:references|removed as unsupported)\s*$", re.I)
_MARKS = re.compile(rf"\s*{CITATION.pattern}")  # a citation mark, with the space before it
_ITEM = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)]|#{1,6})\s+")


@dataclass(frozen=True)
class StatedClaim:
    """One claim of a report: what it says (marks out, spaces folded) and what it cites."""

    text: str
    cited: tuple[int, ...]


def report_claims(report: str, question: str) -> list[StatedClaim]:
    """The claims of ``report``, in order, each once."""
    found: dict[str, StatedClaim] = {}
    for line in lines_of(_verified_text(report)):
        if not line.strip():
            continue
        body = _ITEM.sub("", line, count=1)
        heading = line.lstrip().startswith("#") or is_heading(body)
        for sentence in split_sentences(body):
            text = " ".join(_MARKS.sub("", sentence).split())
            if text and not_a_claim(text, question, heading=heading) is None:
                found.setdefault(text, StatedClaim(text, tuple(cited_numbers(sentence))))
    return list(found.values())


def _verified_text(report: str) -> str:
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if _OWN_SECTIONS.match(line.strip()):
            return "\n".join(lines[:i])
    return report
