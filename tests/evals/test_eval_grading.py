"""The grader: three grades read from a reply without guessing, the prompt and its version, a
scripted grader through the critic's own ask (retry nudge, deadline), and a failing grader."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from local2.config._schema import CriticSettings
from local2.critic import Critic
from local2.evals import (
    NUDGE,
    PROMPT,
    PROMPT_VERSION,
    grade_answer,
    grade_prompt,
    parse_grade_reply,
)

V = TypeVar("V")


def reference_parse(reply: str) -> str:
    """The reference parser as REFERENCE.md describes it: the first A, B or C anywhere in the
    reply, "not attempted" (C) when there is none."""
    match = re.search(r"(A|B|C)", reply)
    return {"A": "correct", "B": "incorrect", "C": "not_attempted"}[
        match.group(0) if match else "C"
    ]


@pytest.mark.parametrize(
    ("reply", "grade"),
    [
        ("The answer names the same person.\nGRADE: CORRECT", "correct"),
        ("It gives 1890, the gold says 1888.\nGRADE: INCORRECT", "incorrect"),
        ("It says it does not know.\nGRADE: NOT_ATTEMPTED", "not_attempted"),
        ("Grade: not attempted.", "not_attempted"),
        ("**GRADE:** **Incorrect**", "incorrect"),
        ("**Grade**: correct", "correct"),
        ("The grade is C.", "not_attempted"),
        ("GRADE: A", "correct"),
        ("CORRECT", "correct"),
        ("INCORRECT", "incorrect"),
        ("NOT_ATTEMPTED", "not_attempted"),
        ("Based on the gold answer, the response is right.\n\n**Correct**", "correct"),
        ("B", "incorrect"),
        (
            "<think>Is it CORRECT? GRADE: CORRECT</think>"
            "It contradicts the gold.\nGRADE: INCORRECT",
            "incorrect",
        ),
        ("First I thought GRADE: INCORRECT, but the units differ only.\nGRADE: CORRECT", "correct"),
    ],
)
def test_a_grade_is_read_from_its_line_or_a_bare_last_line(reply: str, grade: str) -> None:
    verdict = parse_grade_reply(reply)
    assert verdict.grade == grade and verdict.problem is None


def test_worded_replies_the_reference_parser_misreads_are_read_right() -> None:
    """REFERENCE.md: the first-letter parser turns CORRECT and INCORRECT into C, NOT_ATTEMPTED
    into A and any reply starting "Based" into B."""
    cases = {
        "CORRECT": "correct",
        "INCORRECT": "incorrect",
        "NOT_ATTEMPTED": "not_attempted",
        "Based on the gold answer it matches.\nGRADE: CORRECT": "correct",
    }
    for reply, right in cases.items():
        assert parse_grade_reply(reply).grade == right
        assert reference_parse(reply) != right  # the pitfall this parser avoids


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "the grader's reply is empty"),
        ("<think>GRADE: CORRECT</think>", "the grader's reply is empty"),
        ("The answer is not correct, I think.", "the grader's reply names no grade"),
        ("I would grade this as correct.", "the grader's reply names no grade"),
        ("GRADE: a correct answer would name the town", "the grader's reply names no grade"),
        (
            "Pick one of:\nGRADE: CORRECT\nGRADE: INCORRECT\nGRADE: NOT_ATTEMPTED",
            "the grader listed the grades, chose none",
        ),
    ],
)
def test_a_reply_without_a_grade_is_no_grade_never_a_guess(reply: str, problem: str) -> None:
    verdict = parse_grade_reply(reply)
    assert verdict.grade is None and verdict.problem == problem


def test_the_reasoning_is_what_came_before_the_grade() -> None:
    verdict = parse_grade_reply("It says 1890;\n  the gold says 1888.\nGRADE: INCORRECT")
    assert verdict.reasoning == "It says 1890; the gold says 1888."


def test_the_prompt_carries_question_gold_and_answer_as_fenced_data() -> None:
    prompt = grade_prompt("When was it built?", ["1781", "in 1781"], "  It was 1781. ")
    assert "<question>\nWhen was it built?\n</question>" in prompt
    assert "<gold_answer>\n- 1781\n- in 1781\n</gold_answer>" in prompt
    assert "<answer>\nIt was 1781.\n</answer>" in prompt
    assert prompt.endswith("GRADE: CORRECT\nGRADE: INCORRECT\nGRADE: NOT_ATTEMPTED")
    assert "<gold_answer>\n1781\n</gold_answer>" in grade_prompt("Q", ["1781"], "A")
    assert PROMPT_VERSION == "local2-qa-grader-1" and "{question}" in PROMPT


class ScriptedAsker:
    """Answers each prompt from a script, like Critic.ask (re-asks with the nudge)."""

    def __init__(self, *replies: str, retries: int = 1) -> None:
        self.replies = list(replies)
        self.retries = retries
        self.prompts: list[str] = []

    def ask(
        self,
        prompt: str,
        parse: Callable[[str], V],
        nudge: str,
        nothing: V,
        parsed: Callable[[V], bool],
    ) -> V:
        verdict = nothing
        for attempt in range(1 + self.retries):
            self.prompts.append(prompt if attempt == 0 else nudge)
            verdict = parse(self.replies.pop(0))
            if parsed(verdict):
                break
        return verdict


def test_an_empty_answer_is_not_attempted_without_asking() -> None:
    asker = ScriptedAsker()
    verdict = grade_answer(asker, "Q?", ["x"], "   ")
    assert verdict.grade == "not_attempted" and asker.prompts == []


def test_a_reply_without_a_grade_is_asked_again_with_the_nudge() -> None:
    asker = ScriptedAsker("Hmm, it is close.", "GRADE: CORRECT")
    assert grade_answer(asker, "Q?", ["x"], "x").grade == "correct"
    assert asker.prompts[1] == NUDGE


def critic(*replies: str, retries: int = 1) -> Critic:
    model = GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))
    return Critic(model, CriticSettings(retries=retries, timeout_s=10))


def test_the_critics_judge_grades_through_its_own_ask() -> None:
    assert grade_answer(critic("Same year.\nGRADE: CORRECT"), "Q?", ["1781"], "1781").grade == (
        "correct"
    )
    verdict = grade_answer(critic("no idea", "GRADE: INCORRECT"), "Q?", ["1781"], "1790")
    assert verdict.grade == "incorrect"
    verdict = grade_answer(critic("no idea", "still none", retries=1), "Q?", ["1781"], "1790")
    assert verdict.grade is None and verdict.problem == "the grader's reply names no grade"


def test_a_grader_that_fails_leaves_the_answer_ungraded_with_the_reason() -> None:
    class Broken:
        def ask(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("model server down")

    verdict = grade_answer(Broken(), "Q?", ["x"], "x")
    assert verdict.grade is None
    assert verdict.problem == "the grader failed: ConnectionError: model server down"


def test_a_judge_with_arguments_bound_grades_through_the_critics_ask() -> None:
    """The embedded grader is the model with a JSON grade bound (``model.bind(...)``); the
    critic's ask must call it as it calls the model itself (it once failed on the binding,
    leaving every answer ungraded: ``AttributeError: _agenerate``)."""
    model = GenericFakeChatModel(messages=iter([AIMessage('{"grade": "INCORRECT"}')]))
    bound = Critic(model.bind(max_tokens=24), CriticSettings(retries=0, timeout_s=10))
    verdict = grade_answer(bound, "Q?", ["1781"], "1790")
    assert (verdict.grade, verdict.problem, verdict.reasoning) == ("incorrect", None, "")
