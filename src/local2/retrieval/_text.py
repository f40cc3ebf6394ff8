"""Words, sentences and numbers: the one tokeniser and the one sentence splitter.

Every lexical match in LoCAL2 (page passages, research's rerank and second hop, the corpus
provider, the files index's BM25 side) tokenises with :func:`terms`, so a query meets a
passage the same way everywhere. Where a text must be compared word for word as written
(whether a gold sentence reached the model, whether a model repeats itself), every word
comes from :func:`words`. Every split of text into sentences (long paragraphs into
passages, a draft into the sentences verify checks, a message into the facts memory keeps,
a source into the sentences the second hop weighs) is :func:`sentences`, and whether a text
ends at a sentence's end is :func:`ends_sentence`.

The numbers a text states: one pattern, one normal form, one check.

Research's verify (is each figure of a sentence in the source it cites?) and the critic's
grounding check (is each figure of an answer in what the turn's tools returned?) ask the
same question, and :func:`unstated_numbers` answers it for both.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+")
_EVERY_WORD = re.compile(r"\w+")
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours tell know please find give show want
    need many much get got use used using like page article web site http https www com org
    net html htm php aspx index
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def terms(text: str) -> list[str]:
    """Lower-cased, lightly stemmed content words of ``text`` (stopwords dropped).

    Identifiers are split at underscores, so ``__slots__`` meets "slots".
    """
    out = []
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


def words(text: str) -> list[str]:
    """Every word of ``text``, in order, NFKC-normalised and case-folded: none dropped,
    none stemmed (so "the", "The" and "ＴＨＥ" are one word, and "cases" is not "case")."""
    return _EVERY_WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _stem(word: str) -> str:
    """Fold plurals, -ing, -ed and a final e, so "cases"/"case" and "created"/"create" meet.

    Crude (Harman's S-stemmer plus two suffixes), but the same on both sides of the match.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


# What may close a sentence after its full stop (a quote, a bracket).
_CLOSERS = "\"'»”’)\\]"
# A sentence's end that starts no new one: "Dr. Okafor", "Ursula K. Le Guin", "e.g. this",
# "Rear Adm. Byrd", "Giacomo Feo (c. 1471 – 1495)", "(b. 1959 in Kuusankoski)", "Aug. 5".
# A company's "Inc." or "Bros." may end a sentence too: then two stay one, which no check
# of a sentence against its source minds (a sentence cut in two loses its citation).
_ABBREVIATION = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Mme|Prof|St|Jr|Sr|Mt|No|vs|etc|approx|e\.g|i\.e|et al|ca|fl"
    r"|Adm|Gen|Col|Capt|Cmdr|Lt|Sgt|Cpl|Rev|Hon|Gov|Sen|Rep|Fr|Bros|Inc|Ltd|Co|Corp"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Za-z])\.$"
)
_SPLITTERS: dict[tuple[str, bool, bool], re.Pattern[str]] = {}


def _splitter(ends: str, capital: bool, lines: bool) -> re.Pattern[str]:
    key = (ends, capital, lines)
    if key not in _SPLITTERS:
        after = r"(?=[\"'“‘(\[]?[A-Z0-9])" if capital else ""
        pattern = rf"(?<=[{re.escape(ends)}])\s+{after}"
        _SPLITTERS[key] = re.compile(rf"{pattern}|\n+" if lines else pattern)
    return _SPLITTERS[key]


def sentences(
    text: str, *, ends: str = ".!?", capital: bool = False, lines: bool = False
) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out.

    A sentence ends at one of ``ends`` followed by white space (never inside "3.5" or
    "127.0.0.1"), except after a title or an initial ("Dr.", "K."); ``capital``: only where
    the next one starts like a sentence (a capital or a digit, maybe after a quote or a
    bracket: "e.g. this" goes on); ``lines``: every line break ends one too (a chat message,
    where a line is a thought). Add ``;`` and ``:`` to ``ends`` to cut at clauses.
    """
    out: list[str] = []
    for piece in (p.strip() for p in _splitter(ends, capital, lines).split(text)):
        if not piece:
            continue
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


_ENDS_SENTENCE = re.compile(rf"[.!?][{_CLOSERS}]*\s*\Z")


def ends_sentence(text: str) -> bool:
    """Whether ``text`` ends where a sentence does (a full stop, maybe a closing quote)."""
    return _ENDS_SENTENCE.search(text) is not None


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
