"""Which sentences of a report state something, and so must cite a source that supports them.

Every sentence is a claim except, by what its text says:

- a heading (a Markdown heading, a line all in bold, a short label ending in ":", a short
  line written as a title);
- the question asked back, or restated: a sentence ending in "?", or one whose words are the
  question's own beside words of asking ("This report asks why ...", "The question is
  whether ...");
- a sentence that only says what was or was not found: made of nothing but words about the
  report, the sources and the search ("Here is what the sources say.", "No sources could
  be gathered, so there is nothing to report."), or in the words of a finding that is not
  there ("The sources do not say how much it cost.", "I could not find when it opened."),
  with no "but" or "although" after which a claim could follow;
- a pointer to a source ("See the survey [2] for details.");
- the embedded model's note that it stopped repeating itself.

Such a sentence still must not bring a name or a number of its own (verify checks that).
"""

from __future__ import annotations

import re

from local2.models import REPETITION_NOTE
from local2.retrieval import FRAME_WORDS, terms

HEADING = "a heading"
QUESTION = "the question"
ABOUT_SOURCES = "says what was or was not found"
WRITER_NOTE = "the model's own note"
POINTER = "points to a source"

# Words about the report, its sources and the search rather than about the world.
REPORT_WORDS = FRAME_WORDS | frozenset(
    terms(
        """
        above answer answered answers anything attempt attempted available below cannot
        clear clearly data detail details directly enough explicitly find finding findings
        follow following follows gather gathered gave give gives here list listed lists
        none nothing numbered page pages provide provided provides question questions read
        relevant search searched searches searching specific sufficient tried try unable
        unfortunately write written
        """
    )
)
# Words of asking: beside the question's own words they restate it rather than answer it.
ASKING_WORDS = frozenset(
    terms(
        """
        address addresses ask asked asks concern concerns consider considers examine
        examines explore explores investigate investigates look looks question questions
        topic
        """
    )
)
_WH = re.compile(r"\b(?:why|how|what|which|who|whom|whose|when|where|whether|if)\b", re.I)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|yet|whereas|while)\b|;", re.I)

_NOUNS = r"(?:sources?|search(?:es)?(?:\s+results?)?|pages?|documents?|texts?|articles?)"
_SOURCES = rf"(?:the|these|those|my|our|its|any\s+of\s+the)\s+(?:\w+\s+)?{_NOUNS}"
_SAY = (
    r"(?:say|says|said|mention\w*|state[sd]?|give[sn]?|gave|provide[sd]?|contain\w*|"
    r"answer\w*|include[sd]?|cover\w*|discuss\w*|address\w*|describe[sd]?|specif\w+|"
    r"report\w*|explain\w*|tell|tells|told|list\w*|name[sd]?|identif\w+|show\w*|offer\w*|"
    r"confirm\w*|indicate[sd]?|support\w*)"
)
# A finding that is not there: "No source says", "No sources could be gathered", "The
# sources do not mention", "I could not find", "is not mentioned in the sources", "There is
# no information in the pages". A source noun alone is not enough ("He had no source of
# income", "No documents of the period survive" state something).
NOT_FOUND = re.compile(
    "|".join(
        [
            rf"\b(?:no|none\s+of\s+the|neither\s+of\s+the|not\s+one\s+of\s+the)\s+"
            rf"(?:\w+\s+)?{_NOUNS}\s+(?:\w+\s+){{0,2}}?{_SAY}\b",
            rf"\bno\s+(?:\w+\s+)?{_NOUNS}\s+(?:could|can|were|was)\s+(?:be\s+)?"
            r"(?:found|gathered|read|retrieved|fetched|reached)\b",
            rf"\b{_SOURCES}\s+(?:do|does|did|could|can|would)\s*(?:not|n't)\s+(?:\w+\s+)?{_SAY}\b",
            r"\b(?:i|we)\s+(?:could|can|did|was|were)\s*(?:not|n't)\s+(?:\w+\s+)?"
            r"(?:find|found|locate|identify|determine|confirm|see|gather|answer)\b",
            r"\b(?:i|we)\s+found\s+no(?:thing)?\b",
            rf"\bnot\s+(?:\w+\s+){{0,2}}?{_SAY}\s+(?:in|by)\s+{_SOURCES}\b",
            r"\b(?:nothing|no\s+(?:information|mention|details?|data|evidence|answer))\s+"
            rf"(?:\w+\s+){{0,3}}?(?:in|from|among)\s+{_SOURCES}\b",
        ]
    ),
    re.I,
)
_POINTER = re.compile(r"^(?:for\s+(?:more|details|further)\b[^,]*,\s*)?see\b", re.I)
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)[^*_\n]+\1\s*:?\s*$")
LABEL_WORDS = 6  # a line this short ending in ":" is a label ("Key findings:")


# Words a title leaves in lower case ("Senate of New York State").
_SMALL_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "at",
        "de",
        "der",
        "di",
        "du",
        "for",
        "from",
        "in",
        "la",
        "le",
        "of",
        "on",
        "or",
        "the",
        "to",
        "van",
        "von",
    }
)


def _title_like(line: str) -> bool:
    """A short line written as a title: no sentence's end, every word but the small ones
    capitalised ("Introduction", "Senate of New York State", "Bharatpur, Rajasthan")."""
    found = line.split()
    if not found or len(found) > LABEL_WORDS or line.endswith((".", "!", "?", ";", ",")):
        return False
    return all(w[0].isupper() or w.lower() in _SMALL_WORDS for w in found if w[0].isalpha())


def is_heading(line: str) -> bool:
    """A Markdown heading, a line all in bold, a short label that ends in ":", or a short
    line written as a title."""
    stripped = line.strip()
    if re.match(r"#{1,6}\s", stripped) or _BOLD_LINE.match(stripped):
        return True
    if stripped.endswith(":") and len(stripped.split()) <= LABEL_WORDS:
        return True
    return _title_like(stripped)


def not_a_claim(sentence: str, question: str, *, heading: bool = False) -> str | None:
    """Why ``sentence`` (citation marks taken out) states nothing, or None if it does."""
    text = sentence.strip()
    if heading or is_heading(text):
        return HEADING
    if text == REPETITION_NOTE.strip():
        return WRITER_NOTE
    if text.rstrip("*_ )\"'”’").endswith("?"):
        return QUESTION
    if _POINTER.match(text):
        return POINTER
    said = [t for t in terms(text) if t not in REPORT_WORDS]
    if not said:
        return ABOUT_SOURCES
    asking = [t for t in said if t in ASKING_WORDS]
    if set(said) - set(asking) <= set(terms(question)) and (asking or _WH.search(text)):
        return QUESTION
    if NOT_FOUND.search(text) and not _CONTRAST.search(text):
        return ABOUT_SOURCES
    return None
