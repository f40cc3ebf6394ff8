"""The numbers a text states: one pattern, one normal form, one check.

Research's verify (is each figure of a sentence in the source it cites?) and the critic's
grounding check (is each figure of an answer in what the turn's tools returned?) ask the
same question, and :func:`unstated_numbers` answers it for both."""

from __future__ import annotations

import re

# A stated quantity: thousands grouped by "," or a (narrow) no-break space, a decimal part
# (or several, as a version writes them: "3.3.2"), an ordinal's suffix or a decade's "s"
# ("1,450", "1 450", "3,5", "2nd", "1980s"); never inside a word or an address ("v2").
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,\u202f\u00a0]\d{3})*(?:[.,]\d+)*(?:st|nd|rd|th|s)?")


def normal_number(token: str) -> str:
    """``1,450`` / ``1 450`` -> ``1450``; ``3,5`` -> ``3.5``; ``2nd`` -> ``2``; ``1980s``
    -> ``1980``."""
    token = re.sub(r"(?:st|nd|rd|th|s)$", "", token)
    token = re.sub(r"[\u202f\u00a0]", "", token)
    token = re.sub(r",(?=\d{3}(?:\D|$))", "", token)
    return token.replace(",", ".")


def numbers(text: str) -> list[str]:
    """The quantities ``text`` states, normalised (:func:`normal_number`), in order."""
    return [normal_number(m.group(0)) for m in NUMBER.finditer(text)]


def unstated_numbers(claim: str, evidence: str, *, shortest: int = 1) -> list[str]:
    """The numbers ``claim`` states that ``evidence`` does not, each once, in order.

    ``shortest``: fewer digits than this are not taken for a figure (a chat answer's "3
    ways" or list number "1." is not a claim to check; a report's "3 days" is)."""
    known = set(numbers(evidence))
    stated = (n for n in numbers(claim) if len(n) >= shortest)
    return list(dict.fromkeys(n for n in stated if n not in known))
