"""The next hop: the names a question turns on that no page read is about yet, searched next.

A bridge question names its answer's subject only by a description ("the woman who
portrayed Corliss Archer in Kiss and Tell"): a search for the question finds the page that
says who (Shirley Temple), but what the question asks about her is on her own page, which no
search for the question's words finds. A comparison names both its subjects, but one search
for both often brings up only one. So after a round, the candidates for the next search are
the names the first hop's best pages state about the question's subject and the question
does not (:func:`bridge_names`), and the names the question gives that no page read is about
(:func:`unread_names`), one of each in turn. The reflecting model is shown them and told to
search the one the question turns on (its own gaps come first); when it fails its schema,
they are searched by rule, each with the question's own relation words ("Shirley Temple
government position held woman portrayed film"). ``max_rounds`` bounds the hops as it
bounds every round.

How a bridge is chosen, with the retrieval part only (BM25, the tokeniser, the sentence
splitter) and no table of roles or verbs: the sources are ranked for the question (BM25 over
each one's title and text) and the best :data:`BEST_PAGES` kept; of their sentences, those
that mention the question's subject (a term of a name the question gives, in the sentence or
in its page's title, which says what "it" or "she" is about) are ranked for the question;
each name those sentences give and the question does not weighs its sentence's score,
divided by its page's place, three times as much for a name of several words (a single
capitalised word is as often a people's adjective, "American", as a name). A name weighing
less than half the weightiest is left out. Deterministic, and no model.

A name is a run of capitalised words (joined by "of", "the", "de" ...), not at a sentence's
start unless it is more than one word or seen elsewhere too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import zip_longest
from typing import Any

from local2.research.ledger import Source
from local2.retrieval import bm25_scores, relevance, sentences, split_passages, terms

STRONG = 0.5  # a name weighs at least this share of the weightiest, or it is not searched
SENTENCES = 8  # the sentences about the question's subject that names are taken from
BEST_PAGES = 3  # the sources, best for the question first, whose sentences are read
QUERY_CHARS = 80  # a gap query's length (_plan.TEXT_CHARS)

_JOIN = r"(?:of|the|de|del|la|le|von|van|der|da|di|du)"  # not "and": two names, not one
_CAP = r"[A-Z][\w'’.-]*[\w]"
_NAME = re.compile(rf"\b{_CAP}(?:[ \t]+(?:{_JOIN}[ \t]+)*{_CAP})*")  # on one line
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
_QUESTION_WORD = re.compile(r"[\w'’-]+")


def _names_in(passage: str) -> list[tuple[str, bool]]:
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


def _sentences(text: str) -> list[str]:
    return [t for p in split_passages(text) for t in sentences(p, capital=True)]


def subject_terms(question: str) -> set[str]:
    """The terms of the names the question gives: what its subject is called."""
    return set(terms(" ".join(name for name, _ in _names_in(question))))


def _about_subject(
    question: str, ledger: Sequence[Source]
) -> tuple[list[str], list[float], list[int]]:
    """The sentences of the sources most about ``question``'s subject (BM25 for the terms of
    the names it gives; for the question when it names none) that mention it (all of theirs
    when none does), each with its BM25 score for the question and its page's place (0 the
    best)."""
    sources = [s for s in ledger if s["text"].strip()]
    if not sources:
        return [], [], []
    query = set(terms(question))
    subject = subject_terms(question)
    texts = [terms(f"{s['title']} {s['text']}") for s in sources]
    ranked = bm25_scores(texts, subject or query, k1=1.2, b=0.75)
    best = sorted(range(len(sources)), key=lambda i: (-ranked[i], sources[i]["n"]))
    kept = [i for i in best[:BEST_PAGES] if ranked[i] > 0]
    pairs = [(place, sources[i]) for place, i in enumerate(kept)]
    # A sentence is read with its page's title, which says what "it" or "she" is.
    rows = [
        (place, terms(f"{s['title']} {t}"), t) for place, s in pairs for t in _sentences(s["text"])
    ]
    about = [r for r in rows if subject & set(r[1])] or rows
    scores = bm25_scores([words for _, words, _ in about], query, k1=1.2, b=0.75)
    return [t for _, _, t in about], scores, [p for p, _, _ in about]


def bridge_names(question: str, ledger: Sequence[Source], limit: int = 3) -> list[str]:
    """The names the best sources state about ``question``'s subject that the question
    does not give, weightiest first (at most ``limit``)."""
    # A name the question gives is not a bridge; a common word it uses may be part of one
    # ("competes in a conference": the America East Conference).
    asked = {w.lower() for name, _ in _names_in(question) for w in name.split()}
    sentences, scores, places = _about_subject(question, ledger)
    best = sorted(range(len(sentences)), key=lambda i: (places[i], -scores[i], i))[:SENTENCES]
    weight: dict[str, float] = defaultdict(float)
    inside: dict[str, int] = defaultdict(int)  # seen not at a sentence's start
    for i in best:
        if scores[i] <= 0:
            continue
        for name, at_start in _names_in(sentences[i]):
            if any(w.lower() in asked for w in name.split()):
                continue
            several = len(name.split()) > 1
            weight[name] += scores[i] / (1 + places[i]) * (1.5 if several else 0.5)
            inside[name] += 0 if at_start and not several else 1
    kept = sorted((n for n in weight if inside[n] > 0), key=lambda n: (-weight[n], n))
    top = weight[kept[0]] if kept else 0.0
    return [n for n in kept if weight[n] >= STRONG * top][:limit]


def unread_names(question: str, ledger: Sequence[Source]) -> list[str]:
    """The names the question gives that no page read is about (none has the name in its
    title): a comparison's second subject the first search did not bring up."""
    titles = [s["title"].casefold() for s in ledger if s["kind"] == "page"]
    # A single capitalised word that starts the question is its first word, not a name.
    found = _names_in(question)
    names = dict.fromkeys(name for name, start in found if not start or " " in name)
    return [n for n in names if not any(n.casefold() in t for t in titles)]


def excerpt(text: str, question: str, chars: int) -> str:
    """The passage of ``text`` most relevant to ``question``, cut to ``chars`` (the start,
    when no passage has a word of it): what a prompt shows of a source."""
    passages = split_passages(text) or [text]
    scores = relevance(passages, question)
    best = passages[max(range(len(passages)), key=lambda i: (scores[i], -i))]
    flat = " ".join(best.split())
    return flat if len(flat) <= chars else flat[:chars].rsplit(" ", 1)[0] + " …"


def relation_words(question: str) -> str:
    """What the question asks, without the names it gives: its content words in lower
    case (a capitalised word of the question is one of its names, or its first word)."""
    words = [w for w in _QUESTION_WORD.findall(question) if w[:1].islower() or w.isdigit()]
    kept = [w for w in words if terms(w)]  # stopwords and the like out
    return " ".join(dict.fromkeys(kept))


def hop_queries(
    question: str, ledger: Sequence[Source], done: Iterable[str], limit: int
) -> list[str]:
    """The searches of the next hop: each bridge name with the question's relation words,
    none the run has made (``done``: queries as :func:`local2.research.reflect.searched`
    keeps them), at most ``limit``."""
    made = set(done)
    relation = relation_words(question)
    queries: list[str] = []
    bridges = bridge_names(question, ledger, max(limit, 1) * 2)
    unread = unread_names(question, ledger)
    names = [n for pair in zip_longest(bridges, unread) for n in pair if n]  # one of each first
    for name in dict.fromkeys(names):
        full = f"{name} {relation}".strip()
        query = full if len(full) <= QUERY_CHARS else full[:QUERY_CHARS].rsplit(" ", 1)[0]
        if " ".join(query.lower().split()) not in made and query not in queries:
            queries.append(query)
    return queries[:limit]


def hopped(state: Mapping[str, Any]) -> bool:
    """The run's current round is the second hop the rule named after the model named no
    gaps (``rule_hop``: the round it was named after)."""
    hop = state.get("rule_hop")
    return hop is not None and hop == (state.get("round") or 1) - 1
