"""The statistics a run reports: a proportion with its 95 % Wilson interval, exact McNemar on
paired questions, and the words for both, which never call a difference inside the noise a
win.

Wilson's interval (rather than the normal approximation) stays inside 0-1 and is honest at
small n and at 0 % or 100 %. McNemar's exact test looks only at the questions the two runs
disagree on: ``b`` (only A right) and ``c`` (only B right); under "no difference" each
disagreement is a fair coin, so ``p = min(1, 2 P(X <= min(b, c)))`` with
``X ~ Binomial(b + c, 1/2)``, computed in exact integers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from local2.contracts import Rate

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
ALPHA = 0.05
FEW_QUESTIONS = 100  # below this a single run says little (LDR's rule of thumb too)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials (``(0, 1)`` when n = 0)."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(k: int, n: int) -> Rate:
    low, high = wilson(k, n)
    return Rate(k=k, n=n, value=k / n if n else 0.0, low=low, high=high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / (1 << n))


@dataclass(frozen=True)
class Paired:
    """Two runs' correctness on the questions both graded."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_a, self.only_b)

    @property
    def accuracy_a(self) -> Rate:
        return rate(self.both + self.only_a, self.n)

    @property
    def accuracy_b(self) -> Rate:
        return rate(self.both + self.only_b, self.n)

    def verdict(self, alpha: float = ALPHA) -> Literal["a", "b", "no_difference"]:
        """Which run answers more correctly, only when the test says so at ``alpha``."""
        if self.p_value >= alpha or self.only_a == self.only_b:
            return "no_difference"
        return "a" if self.only_a > self.only_b else "b"


def pair(a: Mapping[str, bool], b: Mapping[str, bool]) -> Paired:
    """The paired table of two runs' ``{question id: correct}`` over the ids in both."""
    shared = a.keys() & b.keys()
    both = sum(1 for q in shared if a[q] and b[q])
    only_a = sum(1 for q in shared if a[q] and not b[q])
    only_b = sum(1 for q in shared if b[q] and not a[q])
    return Paired(both, only_a, only_b, len(shared) - both - only_a - only_b)


def percent(x: float) -> str:
    return f"{100 * x:.1f} %"


def short_rate(r: Rate) -> str:
    """``61.0 % [51-70]`` for a table cell ("" when nothing was counted)."""
    if not r["n"]:
        return ""
    return f"{percent(r['value'])} [{100 * r['low']:.0f}-{100 * r['high']:.0f}]"


def say_duration(seconds: float | None) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 20 min``; ``…`` while not known yet."""
    if seconds is None:
        return "…"
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def say_rate(r: Rate, what: str = "accuracy") -> str:
    """``accuracy 61.0 % (95 % CI 51.2-70.0 %, 61 of 100)``, with a warning under 100."""
    text = (
        f"{what} {percent(r['value'])} (95 % CI {100 * r['low']:.1f}-{percent(r['high'])}, "
        f"{r['k']} of {r['n']})"
    )
    if r["n"] < FEW_QUESTIONS:
        text += f"; fewer than {FEW_QUESTIONS} questions: read the interval, not the number"
    return text


def say_difference(
    paired: Paired, name_a: str = "A", name_b: str = "B", alpha: float = ALPHA
) -> str:
    """One sentence on two runs, which names a better run only when exact McNemar is below
    ``alpha``; otherwise it says the gap is inside the noise."""
    if paired.n == 0:
        return f"{name_a} and {name_b} graded no question in common: nothing to compare."
    acc_a, acc_b = paired.accuracy_a["value"], paired.accuracy_b["value"]
    on = (
        f"{paired.n} paired questions: {name_a} {percent(acc_a)}, {name_b} {percent(acc_b)}; "
        f"only {name_a} right on {paired.only_a}, only {name_b} right on {paired.only_b}; "
        f"exact McNemar {p_text(paired.p_value)}"
    )
    winner = paired.verdict(alpha)
    if winner == "no_difference":
        return (
            f"No difference the test can see: {on}. The gap is inside the noise "
            f"(p >= {alpha:g}); more questions would be needed to tell them apart."
        )
    better, worse = (name_a, name_b) if winner == "a" else (name_b, name_a)
    return f"{better} answers more questions correctly than {worse}: {on}."
