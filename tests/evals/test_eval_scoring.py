"""Exact match, token F1 and "contains the gold", with SQuAD's normalisation; values worked
out by hand."""

from __future__ import annotations

import pytest

from local2.evals import best_f1, contains_gold, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   Apple, a pear  ", "apple pear"),
        ("U.S.", "us"),  # SQuAD deletes punctuation, it does not split on it
        ("1,240 metres", "1240 metres"),
        ("Théâtre «du» Soleil", "théâtre du soleil"),  # Unicode punctuation goes too
        ("There", "there"),  # "the" only as a word
    ],
)
def test_normalisation_is_squads(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


def test_exact_match_against_any_gold_answer() -> None:
    assert exact_match("the Saltmere Tidal Mill.", ["Kestle Bridge", "Saltmere tidal mill"])
    assert not exact_match("It was the Saltmere Tidal Mill.", ["Saltmere Tidal Mill"])


def test_token_f1_by_hand() -> None:
    # answer: [saltmere, tidal, mill, built, 1781] (5), gold: [saltmere, tidal, mill] (3)
    # common 3: precision 3/5, recall 3/3, F1 = 2 * 0.6 * 1 / 1.6 = 0.75
    assert token_f1("The Saltmere tidal mill, built 1781", "Saltmere Tidal Mill") == pytest.approx(
        0.75
    )
    # repeated tokens count once each side: answer [oats, oats, barley], gold [oats]
    # common 1: precision 1/3, recall 1, F1 = 0.5
    assert token_f1("oats oats barley", "oats") == pytest.approx(0.5)
    assert token_f1("nothing shared", "1781") == 0.0
    assert token_f1("the", "a") == 1.0  # both normalise to nothing
    assert best_f1("1781", ["in 1781", "1781"]) == 1.0
    assert best_f1("x", []) == 0.0


def test_contains_gold_needs_whole_words() -> None:
    assert contains_gold("It was built in 1781, by Greve.", ["1781"])
    assert contains_gold("The answer is the River Aun.", ["river aun"])
    assert not contains_gold("It was built in 17812.", ["1781"])
    assert not contains_gold("Anything", ["the"])  # a gold that normalises to nothing
