"""The numbers a text states: one place for the patterns the citation check (research's
verify) and the critic's grounding check compare a claim's numbers with its evidence by."""

from __future__ import annotations

import re

# A stated quantity: thousands grouped by "," or a (narrow) no-break space, a decimal part,
# an ordinal's suffix ("1,450", "1 450", "3,5", "2nd").
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,\u202f\u00a0]\d{3})*(?:[.,]\d+)?(?:st|nd|rd|th)?")
# A figure as it is written in an answer: digits and the dots or commas between them, not
# in a word ("1.99", "3.3.2", "48,000", "2024", "12%"; not "v2" or "2nd").
FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


def normal_number(token: str) -> str:
    """``1,450`` / ``1 450`` -> ``1450``; ``3,5`` -> ``3.5``; ``2nd`` -> ``2``."""
    token = re.sub(r"(?:st|nd|rd|th)$", "", token)
    token = re.sub(r"[\u202f\u00a0]", "", token)
    token = re.sub(r",(?=\d{3}(?:\D|$))", "", token)
    return token.replace(",", ".")


def numbers(text: str) -> list[str]:
    """The quantities ``text`` states, normalised (:func:`normal_number`), in order."""
    return [normal_number(m.group(0)) for m in NUMBER.finditer(text)]


def figures(text: str) -> list[str]:
    """The figures of ``text`` (:data:`FIGURE`), thousands separators dropped
    ("48,000" -> "48000"), in order."""
    return [m.group(0).replace(",", "") for m in FIGURE.finditer(text)]
