"""Wilson intervals and exact McNemar against a reference computation, and words that never
call a difference inside the noise a win.

The reference values were computed with statsmodels 0.15.0 and scipy 1.17.1, which are not
dependencies: ``proportion_confint(k, n, alpha=0.05, method="wilson")`` and
``mcnemar([[10, b], [c, 10]], exact=True).pvalue`` (``scipy.stats.binomtest(min(b, c), b + c)``
agrees). Each is also checked here against a second computation written differently:
the interval by inverting the score test by bisection, the p-value by summing exact
binomial probabilities as fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from local2.evals import mcnemar_exact, pair, rate, say_difference, say_rate, wilson
from local2.evals._stats import Z95, Paired

WILSON = [  # k, n, low, high (statsmodels)
    (0, 10, 0.0, 0.27753279986288926),
    (10, 10, 0.7224672001371106, 1.0),
    (7, 30, 0.11792388144489496, 0.40928326158122175),
    (61, 100, 0.5120301704584073, 0.6998312599360558),
    (1, 1, 0.2065493143772374, 1.0),
    (430, 680, 0.5954636734732066, 0.6677552315496265),
    (50, 100, 0.4038315303659956, 0.5961684696340044),
    (3, 7, 0.15821985525146964, 0.7495416354723428),
]
MCNEMAR = [  # b, c, p (statsmodels, exact)
    (0, 0, 1.0),
    (3, 3, 1.0),
    (1, 9, 0.021484375),
    (10, 2, 0.03857421875),
    (0, 7, 0.015625),
    (25, 40, 0.08168153394154003),
    (120, 95, 0.10145232764870649),
    (5, 6, 1.0),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), WILSON)
def test_wilson_matches_statsmodels(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((low, high), abs=1e-12)


def score_test_bound(k: int, n: int, upper: bool) -> float:
    """The p at which |k/n - p| = z sqrt(p(1-p)/n): the Wilson bound, found by bisection."""
    phat = k / n
    lo, hi = (phat, 1.0) if upper else (0.0, phat)
    for _ in range(200):
        mid = (lo + hi) / 2
        outside = abs(phat - mid) > Z95 * math.sqrt(mid * (1 - mid) / n)
        if outside == upper:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


@pytest.mark.parametrize(("k", "n"), [(k, n) for k, n, _, _ in WILSON])
def test_wilson_is_the_inverted_score_test(k: int, n: int) -> None:
    low, high = wilson(k, n)
    assert low == pytest.approx(score_test_bound(k, n, upper=False), abs=1e-9)
    assert high == pytest.approx(score_test_bound(k, n, upper=True), abs=1e-9)


def test_wilson_edges() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(5, 4)
    r = rate(61, 100)
    assert (r["k"], r["n"], r["value"]) == (61, 100, 0.61)


@pytest.mark.parametrize(("b", "c", "p"), MCNEMAR)
def test_exact_mcnemar_matches_statsmodels(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize(("b", "c"), [(b, c) for b, c, _ in MCNEMAR])
def test_exact_mcnemar_is_twice_the_binomial_tail(b: int, c: int) -> None:
    n = b + c
    tail = sum((Fraction(math.comb(n, i), 2**n) for i in range(min(b, c) + 1)), start=Fraction(0))
    assert mcnemar_exact(b, c) == pytest.approx(float(min(Fraction(1), 2 * tail)), rel=1e-15)


def test_pairing_counts_only_questions_both_runs_graded() -> None:
    a = {"q1": True, "q2": True, "q3": False, "q4": False, "q5": True}
    b = {"q1": True, "q2": False, "q3": True, "q4": False, "q6": True}
    paired = pair(a, b)
    assert (paired.both, paired.only_a, paired.only_b, paired.neither) == (1, 1, 1, 1)
    assert paired.n == 4 and paired.p_value == 1.0
    assert paired.accuracy_a["value"] == paired.accuracy_b["value"] == 0.5


def test_no_difference_inside_the_noise_is_ever_called_a_win() -> None:
    """Over every table with up to 40 discordant pairs: a run is named better exactly when
    p < 0.05, and never with p >= 0.05."""
    for b in range(41):
        for c in range(41 - b):
            paired = Paired(both=30, only_a=b, only_b=c, neither=10)
            text = say_difference(paired, "qwen", "gemma")
            if paired.p_value < 0.05:
                better = "qwen" if b > c else "gemma"
                assert text.startswith(f"{better} answers more questions correctly"), (b, c)
            else:
                assert text.startswith("No difference the test can see"), (b, c)
                assert "answers more" not in text and "better" not in text


def test_the_words_for_a_difference_and_for_noise() -> None:
    win = say_difference(Paired(both=50, only_a=1, only_b=9, neither=40), "A", "B")
    assert win == (
        "B answers more questions correctly than A: 100 paired questions: A 51.0 %, B 59.0 %; "
        "only A right on 1, only B right on 9; exact McNemar p = 0.021."
    )
    noise = say_difference(Paired(both=50, only_a=3, only_b=8, neither=39), "A", "B")
    assert noise.startswith("No difference the test can see: 100 paired questions: A 53.0 %")
    assert "p = 0.227" in noise and "inside the noise" in noise
    assert "nothing to compare" in say_difference(Paired(0, 0, 0, 0))


def test_the_words_for_an_accuracy_warn_under_a_hundred_questions() -> None:
    assert say_rate(rate(61, 100)) == "accuracy 61.0 % (95 % CI 51.2-70.0 %, 61 of 100)"
    assert "fewer than 100 questions" in say_rate(rate(7, 30))
