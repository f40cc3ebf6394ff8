"""The judge's grade is read only from the end of its output; anything else is None."""

from __future__ import annotations

import time

import pytest

from local2.critic._critic import build_prompt, parse_grade, strip_thinking

TEMPLATE_LINE = (
    '"Feedback: (write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"'
)

CASES: list[tuple[str, str, int | None]] = [
    # Well-formed.
    ("prometheus", "Feedback: The answer is correct and cites its source. [RESULT] 4", 4),
    ("no feedback prefix", "Accurate and grounded in the search result. [RESULT] 5", 5),
    ("trailing newline", "Feedback: Wrong date. [RESULT] 2\n", 2),
    ("trailing period", "Feedback: Partly right. [RESULT] 3.", 3),
    ("parenthesised", "Feedback: Fine. [RESULT] (4)", 4),
    ("colon", "Feedback: Fine. [RESULT]: 4", 4),
    ("bold", "Feedback: Good.\n\n**[RESULT] 5**", 5),
    ("end token", "Feedback: Made up a URL. [RESULT] 1</s>", 1),
    ("Score: N", "The response is helpful but vague.\nScore: 3", 3),
    ("bold Score:", "Mostly correct.\n**Score:** 4", 4),
    ("N/5", "Correct but verbose. 4/5", 4),
    ("N out of 5", "Helpful and grounded: 5 out of 5.", 5),
    ("final score is", "Overall decent. Final score is 3", 3),
    ("[RESULT] N/5", "Good. [RESULT] 4/5", 4),
    # A score mid-text, then another at the end: only the last counts.
    ("mid then end", "At first I thought [RESULT] 5, but the URL is invented. [RESULT] 2", 2),
    ("score then N/5", "Score: 5 for style; for grounding it is 2/5", 2),
    # The template's own [RESULT] quoted back.
    ("template quoted then score", f"The format is {TEMPLATE_LINE}. Feedback: ok. [RESULT] 3", 3),
    (
        "template quoted only",
        f"Feedback: (write a feedback for criteria) {TEMPLATE_LINE[11:]}",
        None,
    ),
    ("template verbatim", TEMPLATE_LINE, None),
    ("template with 5 at end", "I must end with [RESULT] (an integer between 1 and 5)", None),
    # A score that is not at the very end.
    ("score then chatter", "Feedback: Good. [RESULT] 4\n\nLet me know if you need more.", None),
    ("score then label", "Feedback: Good. [RESULT] 4 (Good)", None),
    ("rubric line at end", "Feedback: Fine.\nScore 5: The response is fully correct.", None),
    # Out of range or not a whole number.
    ("zero", "Feedback: Nothing useful. [RESULT] 0", None),
    ("six", "Feedback: Excellent! [RESULT] 6", None),
    ("ten", "Feedback: Excellent! [RESULT] 10", None),
    ("negative", "Feedback: Harmful. [RESULT] -1", None),
    ("decimal", "Feedback: Between good and great. [RESULT] 4.5", None),
    ("other scale", "Feedback: Good. Score: 8/10", None),
    ("N/50", "Feedback: Good. [RESULT] 4/50", None),
    # Empty or prose only.
    ("empty", "", None),
    ("whitespace", "   \n\t ", None),
    ("prose only", "The response is accurate and well grounded in the evidence.", None),
    ("prose with numbers", "It lists 3 sources from 2024 and gives 5 tips.", None),
    ("marker without number", "Feedback: I cannot decide. [RESULT]", None),
    # Thinking is never parsed.
    ("think then grade", "<think>This deserves [RESULT] 5</think>\nFeedback: Wrong. [RESULT] 1", 1),
    ("unclosed think", "<think>Looks fine, so [RESULT] 5", None),
    ("closing tag only", "the template opened thinking [RESULT] 5</think>Weak. [RESULT] 2", 2),
]


@pytest.mark.parametrize(
    ("output", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse_grade(output: str, expected: int | None) -> None:
    grade = parse_grade(output)
    assert grade.score == expected
    if expected is None:
        assert grade.reason, "a null grade must say why"
    else:
        assert grade.reason is None


def test_many_cases() -> None:
    assert len(CASES) >= 20
    assert {c[2] for c in CASES} >= {None, 1, 2, 3, 4, 5}


def test_feedback_is_the_text_before_the_score() -> None:
    grade = parse_grade("Feedback: The date is wrong; the source says 2023. [RESULT] 2")
    assert grade.feedback == "The date is wrong; the source says 2023."


@pytest.mark.parametrize(
    ("output", "reason_part"),
    [
        ("", "empty"),
        ("<think>only thoughts</think>", "thinking"),
        ("Good answer.", "no score"),
        ("[RESULT] 4 and more text", "does not end"),
        ("[RESULT] 9", "out of the range"),
        ("[RESULT] 3.5", "whole number"),
    ],
)
def test_null_grades_say_why(output: str, reason_part: str) -> None:
    grade = parse_grade(output)
    assert grade.score is None
    assert reason_part in (grade.reason or "")


def test_the_whole_prompt_echoed_back_is_not_a_grade() -> None:
    """The original bug: the template's [RESULT] inside the prompt scored everything 5."""
    prompt = build_prompt("What is 2+2?", "5", [], reference="4")
    assert "[RESULT]" in prompt
    assert parse_grade(prompt).score is None
    assert parse_grade(prompt + "The answer is wrong. [RESULT] 1").score == 1


def test_strip_thinking_keeps_the_answer() -> None:
    assert strip_thinking("<think>a [RESULT] 5</think>Fine. [RESULT] 3").strip() == (
        "Fine. [RESULT] 3"
    )
    assert strip_thinking("<think>cut off mid-thought") == ""


@pytest.mark.parametrize(
    "output",
    [
        "[RESULT]" + " " * 50_000 + "x",
        "Score: " * 10_000,
        "<think>" * 10_000,
        "</think>" * 10_000 + "ok [RESULT] 4",
        "<|end" * 10_000,
        "[RESULT]" + "*_ " * 20_000 + "(",
    ],
    ids=["spaces", "scores", "opens", "closes", "end-tokens", "emphasis"],
)
def test_pathological_output_parses_fast(output: str) -> None:
    # Linear parsing takes milliseconds; a backtracking regex on these 10k-60k character
    # inputs takes minutes. The bound leaves room for a busy shared machine.
    start = time.perf_counter()
    parse_grade(output)
    assert time.perf_counter() - start < 2.0
