"""Whether a recalled memory is relevant enough to offer before the model answers.

What memory holds is about the person ("The user's favourite colour is green."), so it
answers a question about them ("What is my favourite colour?") or about someone it names as
theirs ("How old is Duarte?" for "The user's son Duarte is seven"). Offered for any other
question on a near topic, a small model answers with it: "Name three primary colours." was
answered "The user's favourite colour is green."

A similarity floor alone cannot tell these apart: with the offline MiniLM embedder the
right fact for a question about the person scores as low as 0.25, while a general question
on the same topic scores up to 0.78 ("What is lactose intolerance?" for "The user is lactose
intolerant"); ``bench/recall_quality.py`` measures both. So the floor depends on the
question: ``auto_recall_min_similarity`` for a question about the person or someone named
as theirs, ``auto_recall_general_min_similarity`` (higher) for any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from local2.contracts import MemoryHit
from local2.memory.team import TEAM_KIND

# "I", "my", "our", ... refer to the person; "tell me", "give me", ... only ask for the answer.
_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.I)
_ASKING = re.compile(
    r"\b(?:tell|give|show|help|let|teach|explain to|remind|send|find|get)\s+me\b", re.I
)
# A capitalised word not at a sentence's start: a name the question mentions.
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][\w'-]+)")
# What comes before a name the memory gives as the person's: "user's son ", "called ".
_THEIRS = r"(?:(?:user's|their|our)\s+(?:[a-z]+\s+){0,2}|(?:called|named)\s+)"


def about_the_person(question: str) -> bool:
    """Does the question refer to the person asking (not only ask them to be told)?"""
    return bool(_PERSON.search(_ASKING.sub(" ", question)))


def names_theirs(question: str, memory: str) -> bool:
    """Does the question name someone (or something) the memory says is the person's:
    a name right after "user's <relation>" or "called" ("The user's son Duarte", "a greyhound
    called Pixel"), not any proper noun it shares ("Berlin", "Radiohead")?"""
    for name in dict.fromkeys(_NAME.findall(question.strip())):
        if re.search(_THEIRS + re.escape(name) + r"\b", memory):
            return True
    return False


def offered(
    question: str, hits: Sequence[MemoryHit], personal_floor: float, general_floor: float
) -> list[MemoryHit]:
    """The hits relevant to ``question``: above ``personal_floor`` when it is about the person
    or names someone as theirs, else above ``general_floor``. A team fact is about the team,
    not the person, and written for everyone to be told: ``personal_floor`` is its floor."""
    personal = about_the_person(question)
    return [
        hit
        for hit in hits
        if hit["similarity"] >= general_floor
        or (
            hit["similarity"] >= personal_floor
            and (personal or hit["kind"] == TEAM_KIND or names_theirs(question, hit["content"]))
        )
    ]
