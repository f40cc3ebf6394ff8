"""A question's chains: its subjects, the page read about each, and each one's bridge.

A multi-hop question asks about something it names only through one of its subjects: "the
director of <film A>", "<person>'s wife". The page about the subject says who that is (the
bridge); what the question asks of them (a birth date, a cause of death) is on the
bridge's own page, which no search for the question's words finds. A comparison may have
two such chains ("Which film has the director who was born later, <film A> or <film B>?"
needs both films' pages and both directors'). So each subject is followed on its own:

- :func:`subjects`: the alternatives the question offers ("..., A or B?", "A or B?"), else
  the names it gives (runs of capitalised words, :func:`names_in`);
- :func:`page_about`: the page read whose title names the subject (most of its words);
- :func:`bridge_of`: in that page's sentences, the names it gives that the question does
  not, weighed by the question's relation words near them ("directed by Jean-Marie Poiré"
  for "the director of"): each relation word that the sentence has (the same term, or one
  sharing its first :data:`STEM` letters: "directed", "director") within :data:`NEAR`
  words of the name adds its weight, rarer in the page counting more, divided by the words
  between them (a name no relation word is near is no bridge);
- :func:`chain_queries`: per subject, in the question's order, a search for its page when
  none was read, else for its bridge when the bridge's page was not read, at most
  ``limit`` in all. A chain whose bridge page was read is complete.

A name is a run of capitalised words joined by "of", "the", "de" ... (not "and": two names,
not one; an initial is a word: "J. S. Cardone"), with the small words that open or close a
run left off ("The Beatles" is "Beatles"); whether it starts a sentence is kept beside it,
since a single capitalised word there is as often just the sentence's first word. The
question's relation words, as written, go into the next search with a name. The second hop
(:mod:`local2.research._prompts`) takes its names from here too.

Stated in the question's and the text's terms only (subjects, relation words, names); no
table of roles or verbs, no link structure of any web.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from local2.research._state import Source
from local2.retrieval import sentences, split_passages, terms

STEM = 5  # two words sharing this many first letters are one relation ("directed", "director")
COVER = 0.75  # a title holds this share of a subject's terms to be its page
NEAR = 3  # a relation word counts for a name at most this many words from it
STRONG = 0.5  # a subject's second bridge weighs this share of its first, or is not searched
QUERY_CHARS = 80  # a gap query's length (_plan.TEXT_CHARS)

_JOIN = r"(?:of|the|de|del|la|le|von|van|der|da|di|du|a|an|in|on|is|at|to|for|and)"
_CAP = r"[A-Z0-9][\w'’.!:-]*"
# A choice the question offers at its end: "..., A or B?" (the last alternatives after a
# comma whose text goes on capitalised), or "... A or B?" without one.
_CHOICE = re.compile(r",\s+(?=[A-Z0-9\"“'])(?P<alts>[^?]*\bor\b[^?]*)\?\s*$")
_ALTERNATIVE_SPLIT = re.compile(r",\s*or\s+|\s+or\s+|,\s+(?=[A-Z0-9\"“'])")


_NAME_JOIN = r"(?:of|the|de|del|la|le|von|van|der|da|di|du)"  # not "and": two names, not one
_NAME_CAP = r"[A-Z](?:[\w'’.-]*\w|\.)"  # a word, or an initial ("J. S. Cardone")
_NAME = re.compile(rf"\b{_NAME_CAP}(?:[ \t]+(?:{_NAME_JOIN}[ \t]+)*{_NAME_CAP})*")  # on one line
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
_NOT_NAME_TEXT = """
    the a an in on at of for by with from to and but or as he she it they his her its their
    this that these those there here when where who what which while after before during
    why how whose whom is are was were do does did can could should would will has have had
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday"""
_NOT_NAMES = frozenset(_NOT_NAME_TEXT.split())
# The question's words as written, not local2.retrieval's terms: they go into the next
# hop's search query (unstemmed, "half-brother" whole); terms() only says which to drop.
_EDGE_MARKS = '"“”‘’()[]{}.,;:!?/'  # stripped from a question's words, as written


def names_in(passage: str) -> list[tuple[str, bool]]:
    """The capitalised runs of ``passage``: ``(name, at a sentence's start)``."""
    found = []
    for match in _NAME.finditer(passage):
        words = match.group(0).split()
        while words and words[0].lower() in _NOT_NAMES:  # "The Beatles" -> "Beatles"
            words = words[1:]
        while words and words[-1].lower() in _NOT_NAMES:
            words = words[:-1]
        if not words:
            continue
        starts = bool(_SENTENCE_START.search(passage[: match.start()]))
        found.append((" ".join(words), starts and words[0] == match.group(0).split()[0]))
    return found


def relation_words(question: str) -> str:
    """What the question asks, without the names it gives: its content words in lower
    case (a capitalised word of the question is one of its names, or its first word)."""
    written = (w.strip(_EDGE_MARKS) for w in question.split())
    words = [w for w in written if w[:1].islower() or w.isdigit()]
    kept = [w for w in words if terms(w)]  # stopwords and the like out
    return " ".join(dict.fromkeys(kept))


@dataclass(frozen=True)
class Chain:
    """One subject's chain as far as the run has read it."""

    subject: str
    page: Source | None  # the page read about the subject
    bridges: tuple[str, ...]  # the names it gives the question turns on, weightiest first
    done: bool  # a bridge's own page is read too


def _clean(text: str) -> str:
    return text.strip(" \t\"“”'‘’.,;:")


def _choice(question: str) -> list[str]:
    """The alternatives a question offers at its end, or none."""
    match = _CHOICE.search(question)
    if match is None:
        text = question.rstrip().rstrip("?")
        before, sep, after = text.rpartition(" or ")
        if not sep:
            return []
        # "Which magazine was started first Arthur's Magazine or First for Women?": the
        # first alternative is the capitalised run just before "or".
        run = re.search(rf"(?:{_CAP}(?:\s+(?:{_JOIN}\s+)*{_CAP})*)\s*$", before)
        if run is None or not after[:1].isupper():
            return []
        alts = [run.group(0), after]
    else:
        alts = _ALTERNATIVE_SPLIT.split(match.group("alts"))
    found = [_clean(a) for a in alts if _clean(a)]
    return (
        found if len(found) >= 2 and all(a[:1].isupper() or a[:1].isdigit() for a in found) else []
    )


def offers_choice(question: str) -> bool:
    """The question asks which of the alternatives it names ("..., A or B?")."""
    return bool(_choice(question))


def subjects(question: str) -> list[str]:
    """What the question is about, in its order: the alternatives it offers, else the names
    it gives."""
    offered = _choice(question)
    if offered:
        return offered
    found = names_in(question)
    names = dict.fromkeys(n for n, start in found if not start or " " in n)
    return [n for n in names if terms(n)]  # "Tell" of "Kiss and Tell" is no word to search


def _covers(title: str, name: str) -> bool:
    """``title`` names ``name``: it has most of the name's terms."""
    want = set(terms(name))
    return bool(want) and len(want & set(terms(title))) >= COVER * len(want)


def page_about(name: str, ledger: Sequence[Source]) -> Source | None:
    """The page read whose title names ``name`` (the shortest such title: the most about
    it), or None."""
    pages = [s for s in ledger if s["kind"] == "page" and _covers(s["title"], name)]
    return min(pages, key=lambda s: (len(terms(s["title"])), s["n"])) if pages else None


def _related(term: str, relation: set[str]) -> str | None:
    """The relation word ``term`` is (the same, or sharing its first :data:`STEM` letters)."""
    if term in relation:
        return term
    if len(term) >= STEM:
        return next((r for r in relation if len(r) >= STEM and r[:STEM] == term[:STEM]), None)
    return None


def _sentences_of(page: Source) -> list[str]:
    return [t for p in split_passages(page["text"]) for t in sentences(p, capital=True)]


def _modifies(sentence: str, name: str) -> bool:
    """A single capitalised word right before a lower-case content word is a word that
    describes it ("a 1945 American comedy film"), not someone's name."""
    if " " in name:
        return False
    after = re.search(rf"\b{re.escape(name)}\s+([a-z][\w-]*)", sentence)
    return after is not None and bool(terms(after.group(1)))


def bridge_of(question: str, page: Source, relation: set[str], limit: int = 2) -> list[str]:
    """The names ``page`` gives other than the question's subjects and its own, weightiest
    first, weighed by the question's ``relation`` terms near them (at most ``limit``; a
    second only when it weighs :data:`STRONG` of the first). A name no relation word is near
    is left out."""
    # Not a bridge: the question's subjects, and the page's own name (its title without the
    # part in brackets: "Heaven (Namie Amuro song)" is Heaven's page, and names its singer).
    own = " ".join([*subjects(question), re.sub(r"\s*\([^)]*\)", "", page["title"])])
    asked = {w.lower() for w in own.split() if terms(w)}
    # A word of the title says what the page is ("(1961 film)"), not how a name relates.
    relation = relation - set(terms(page["title"]))
    rows = _sentences_of(page)
    split = [[_related(t, relation) for t in terms(s)] for s in rows]
    df: dict[str, int] = defaultdict(int)
    for row in split:
        for r in set(row):
            if r is not None:
                df[r] += 1
    weight: dict[str, float] = defaultdict(float)
    for sentence, row in zip(rows, split, strict=True):
        places = [(i, r) for i, r in enumerate(row) if r is not None]
        if not places:
            continue
        for name, _start in names_in(sentence):
            if any(w.lower() in asked for w in name.split()) or _modifies(sentence, name):
                continue
            at = len(terms(sentence[: sentence.find(name)]))
            span = len(terms(name))
            score = 0.0
            for r in {r for _, r in places}:
                gap = min(max(0, i - (at + span - 1), at - i) for i, rr in places if rr == r)
                if gap <= NEAR:
                    score += math.log(1 + len(rows) / df[r]) / (1 + gap)
            if score <= 0:
                continue
            several = len(name.split()) > 1
            weight[name] = max(weight[name], score * (1.5 if several else 0.5))
    ranked = sorted(weight, key=lambda n: (-weight[n], n))
    if not ranked:
        return []
    return [n for n in ranked if weight[n] >= STRONG * weight[ranked[0]]][:limit]


def relation_terms(question: str, names: Sequence[str]) -> set[str]:
    """The question's own words that are not its names: what it asks of its subjects."""
    named = set(terms(" ".join(names)))
    return {t for t in terms(question) if t not in named}


def chains(question: str, ledger: Sequence[Source]) -> list[Chain]:
    """Each subject's chain as far as the ledger has read it."""
    found = subjects(question)
    relation = relation_terms(question, found)
    out = []
    pages: set[int] = set()
    for subject in found:
        page = page_about(subject, ledger)
        if page is not None and page["n"] in pages:
            continue  # "It's a Joke, Son!" split at its comma: one subject, one page
        pages |= {page["n"]} if page is not None else set()
        bridges = tuple(bridge_of(question, page, relation)) if page is not None else ()
        done = any(page_about(b, ledger) is not None for b in bridges)
        out.append(Chain(subject, page, bridges, done))
    return out


def _query(name: str, relation: str) -> str:
    full = f"{name} {relation}".strip()
    return full if len(full) <= QUERY_CHARS else full[:QUERY_CHARS].rsplit(" ", 1)[0]


def chain_queries(question: str, ledger: Sequence[Source], limit: int) -> list[str]:
    """The next search of each chain not complete, in the question's order (its page's,
    else its bridge's), at most ``limit``; a question with one chain also searches its
    second bridge, when it weighs enough (:data:`STRONG`)."""
    relation = relation_words(question)
    found = chains(question, ledger)
    queries: list[str] = []
    for chain in found:
        if chain.page is None:
            queries.append(_query(chain.subject, relation))
        elif chain.bridges and not chain.done:
            more = chain.bridges if len(found) == 1 else chain.bridges[:1]
            queries += [_query(b, relation) for b in more]
    return list(dict.fromkeys(queries))[:limit]
