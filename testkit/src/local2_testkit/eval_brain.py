"""A stand-in for an eval run on the fake Ollama server: it answers a question set as
scripted and grades answers the way a careful grader would.

- Answering: ``answers`` maps a question's text to the reply. A question in ``search`` is
  first searched (one ``web_search`` call with the question as its query), then answered.
  A question it has no answer for goes to ``fallback`` (e.g. the research brain) or gets
  "I don't know.".
- Grading: a request carrying LoCAL2's grader prompt gets ``GRADE: NOT_ATTEMPTED`` for an
  answer that says it does not know, ``GRADE: CORRECT`` when a gold answer appears in it
  (lower case, punctuation ignored) and ``GRADE: INCORRECT`` otherwise. ``grades`` counts
  them; ``garbled`` makes that many grader replies carry no grade at all.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Any

from local2_testkit.brains import Reply, message_text, tool_names

ABSTAIN = "I don't know."
_FIELD = re.compile(r"<(question|gold_answer|answer)>\n(.*?)\n</\1>", re.S)
_WORDS = re.compile(r"\w+")


def _norm(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def grade_of(answer: str, golds: list[str]) -> str:
    """The grade a careful grader gives ``answer``."""
    said = f" {_norm(answer)} "
    if "don t know" in said or not said.strip():
        return "NOT_ATTEMPTED"
    return "CORRECT" if any(f" {_norm(g)} " in said for g in golds if g.strip()) else "INCORRECT"


class EvalBrain:
    """Answers and grades an eval run (see the module's docstring)."""

    def __init__(
        self,
        answers: Mapping[str, str],
        *,
        search: Collection[str] = (),
        # a brain: an Ollama request body in
        fallback: Callable[[dict[str, Any]], Reply | str] | None = None,
        garbled: int = 0,
    ) -> None:
        self.answers = dict(answers)
        self.search = set(search)
        self.fallback = fallback
        self.garbled = garbled
        self.grades: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()  # answering requests per question
        self._lock = threading.Lock()

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply | str:
        messages = request.get("messages") or []
        users = [message_text(m) for m in messages if m.get("role") == "user"]
        grading = next((u for u in users if "<gold_answer>" in u), None)
        if (
            grading is not None
        ):  # the grader's prompt (and its nudge, after a reply without a grade)
            return self._grade(grading)
        text = users[-1] if users else ""
        question = next((q for q in self.answers if q in text), None)
        if question is None:
            return self.fallback(request) if self.fallback is not None else ABSTAIN
        searched = any(m.get("role") == "tool" for m in messages)
        if question in self.search and not searched and "web_search" in tool_names(request):
            return Reply(tool_calls=[{"name": "web_search", "arguments": {"query": question}}])
        with self._lock:
            self.asked[question] += 1
        return self.answers[question]

    def _grade(self, prompt: str) -> str:
        fields = dict(_FIELD.findall(prompt))
        gold = fields.get("gold_answer", "")
        golds = [g.removeprefix("- ") for g in gold.splitlines()] if gold else []
        grade = grade_of(fields.get("answer", ""), golds)
        with self._lock:
            if self.garbled > 0:
                self.garbled -= 1
                return "I would rather not say."
            self.grades[grade] += 1
        return f"The answer was compared with the gold answer.\nGRADE: {grade}"
