"""Query-focused page text: splitting, scoring and choosing passages within a budget."""

from __future__ import annotations

import random

import pytest

from local2.documents._extract import GAP
from local2.retrieval._relevance import MAX_PASSAGE, bm25_scores, split_passages
from local2.retrieval._text import terms
from local2.tools._passages import focus

WORD_LIST = "harbour bridge council vote repair ferry deck pivot engineer storm season boat"
WORDS = WORD_LIST.split()


def random_page(rng: random.Random, paragraphs: int) -> str:
    lines = []
    for _ in range(paragraphs):
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25))).capitalize() + "."
            for _ in range(rng.randint(1, 12))
        ]
        lines.append(" ".join(sentences) if rng.random() > 0.2 else rng.choice(WORDS).title())
    return "\n".join(lines)


def test_terms_drop_stopwords_and_fold_inflections() -> None:
    assert terms("What are the cases of the __slots__?") == terms("case slot")
    assert terms("created") == terms("create") == terms("creating")
    assert terms("The libraries") == terms("library")
    assert terms("class glass") == ["class", "glass"]  # -ss is not a plural
    assert terms("in 1894, 61 percent") == ["1894", "61", "percent"]


def test_split_keeps_every_word_in_order_and_bounds_passage_size() -> None:
    rng = random.Random(3)
    for _ in range(20):
        text = random_page(rng, rng.randint(1, 60))
        passages = split_passages(text)
        assert " ".join(" ".join(passages).split()) == " ".join(text.split())
        assert all(len(p) <= MAX_PASSAGE for p in passages)


def test_a_long_paragraph_is_split_at_sentence_ends() -> None:
    sentence = "The pivot bearing was replaced by the engineers last spring."
    paragraph = " ".join([sentence] * 40)
    pieces = split_passages(paragraph)
    assert len(pieces) > 1
    assert all(p.endswith("spring.") for p in pieces)


def test_bm25_prefers_the_passage_with_the_rare_term() -> None:
    passages = [terms(p) for p in ("the harbour bridge", "the harbour ferry", "harbour harbour")]
    scores = bm25_scores(passages, set(terms("ferry harbour")), k1=1.2, b=0.75)
    assert scores.index(max(scores)) == 1
    assert bm25_scores(passages, set(), k1=1.2, b=0.75) == [0.0, 0.0, 0.0]


def test_short_page_is_whole() -> None:
    text = "A short page.\nWith two lines."
    shown = focus(text, "anything", 1000)
    assert shown.text == text and shown.whole


@pytest.mark.parametrize("budget", [1000, 2500, 6000])
def test_focus_never_exceeds_the_budget_and_keeps_page_order(budget: int) -> None:
    rng = random.Random(budget)
    for _ in range(15):
        text = random_page(rng, 80)
        question = " ".join(rng.sample(WORDS, 3))
        shown = focus(text, question, budget)
        assert len(shown.text) <= budget
        body = shown.text.rsplit("\n[Page shortened", 1)[0]
        chunks = [c for c in body.split("\n") if c and c != GAP]
        position = 0
        for chunk in chunks:  # each shown piece is page text, after the one before it
            position = text.find(chunk, position)
            assert position >= 0, chunk
            position += len(chunk)
        assert shown.passages_shown < shown.passages_total
        assert shown.chars_shown <= budget < shown.chars_total


def test_the_answer_far_down_the_page_is_chosen_and_gaps_are_marked() -> None:
    filler = [
        f"Season {i}: the harbour wall was repaired and boats waited outside." for i in range(200)
    ]
    filler[150] = "The keeper's ginger cat, Biscuit, slept on the lamp gallery every night."
    shown = focus("\n".join(filler), "what was the keeper's cat called?", 1500)
    assert "Biscuit" in shown.text
    assert shown.text.startswith(GAP)  # the top of the page was left out
    assert "chosen for relevance to the question" in shown.text


def test_without_matching_words_the_top_of_the_page_is_shown() -> None:
    text = "\n".join(
        f"Paragraph {i} about the harbour wall and its stones." * 3 for i in range(100)
    )
    shown = focus(text, "", 1500)
    assert shown.text.startswith("Paragraph 0 ")
    assert "from the top (nothing on the page matched the question's words)" in shown.text


def test_one_passage_larger_than_the_budget_is_cut_to_fit() -> None:
    text = "word " * 3000  # one paragraph, no sentence ends
    shown = focus(text.strip(), "word", 1000)
    assert len(shown.text) <= 1000
    assert shown.passages_shown >= 1
