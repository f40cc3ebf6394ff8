"""The critic: ask a judge model for a grade, within a deadline, and never guess one.

Each request to the judge is cancellable (:mod:`local2.models._cancellable`): past
``timeout_s``, or when the person asks the next question while it grades (``cancel``, see
docs/architecture.md, "A turn's path"), the request is cancelled and its connection closed,
so the model stops generating. A deadline makes the grade ``null``; a cancel raises
:class:`~local2.errors.GaveWay` through :meth:`Critic.grade`, for the caller to grade later.
The request starts without the graph's context, so the judge's tokens never reach
LangGraph's ``messages`` stream as if they were the answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from local2.config import CriticSettings
from local2.contracts import Critique, ToolCallRecord
from local2.critic._grounding import grounding_flags
from local2.critic._parse import Grade, parse_grade
from local2.critic._prompt import build_prompt
from local2.errors import JudgeTimeout
from local2.models import Cancellation, cancellable_invoke, message_text

RETRY_NUDGE = (
    "Your reply did not end with a score. Reply again in exactly this format: "
    '"Feedback: (your feedback) [RESULT] (an integer number between 1 and 5)"'
)
_MAX_FEEDBACK_CHARS = 2000
Verdict = TypeVar("Verdict")


class Critic:
    """Grades an answer 1-5 against the rubric, with the turn's tool results as evidence."""

    def __init__(self, chat_model: BaseChatModel, settings: CriticSettings) -> None:
        self.chat_model = chat_model
        self.settings = settings

    def judge(
        self,
        query: str,
        answer: str,
        evidence: list[ToolCallRecord],
        reference: str | None,
        cancel: Cancellation | None = None,
    ) -> Grade:
        """Ask the judge, retrying on output without a score; raises JudgeTimeout (and
        GaveWay when ``cancel`` is set)."""
        prompt = build_prompt(
            query,
            answer,
            evidence,
            self.settings.rubric,
            reference,
            max_evidence_chars=self.settings.evidence_max_chars,
        )
        first = Grade(None, "", "the judge was not asked")
        return self.ask(
            prompt, parse_grade, RETRY_NUDGE, first, lambda g: g.score is not None, cancel
        )

    def ask(
        self,
        prompt: str,
        parse: Callable[[str], Verdict],
        nudge: str,
        nothing: Verdict,
        parsed: Callable[[Verdict], bool],
        cancel: Cancellation | None = None,
    ) -> Verdict:
        """One judge prompt, asked again with ``nudge`` while ``parse`` finds no verdict in
        the reply (``1 + retries`` attempts, all within ``timeout_s``); raises JudgeTimeout,
        or GaveWay once ``cancel`` is set (the request in flight is cancelled)."""
        messages: list[BaseMessage] = [HumanMessage(prompt)]
        deadline = time.monotonic() + self.settings.timeout_s
        verdict = nothing
        for _attempt in range(1 + self.settings.retries):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise JudgeTimeout(f"no grade within {self.settings.timeout_s:g}s")
            try:
                reply = cancellable_invoke(
                    self.chat_model,
                    messages,
                    cancel=cancel,
                    timeout_s=remaining,
                    config={"run_name": "critic", "tags": ["critic"]},
                )
            except TimeoutError:
                raise JudgeTimeout(f"no grade within {self.settings.timeout_s:g}s") from None
            text = message_text(reply)
            verdict = parse(text)
            if parsed(verdict):
                return verdict
            messages += [AIMessage(text), HumanMessage(nudge)]
        return verdict

    def grade(
        self,
        query: str,
        answer: str,
        evidence: list[ToolCallRecord],
        known_memory_ids: Callable[[str], bool] | None = None,
        reference: str | None = None,
        listing_tools: Collection[str] = (),
        context: str = "",
        cancel: Cancellation | None = None,
    ) -> Critique:
        """The critique of one answer; failures become ``score: None`` with the reason.
        ``listing_tools``: tools whose results name files without reading them; ``context``:
        what else the model was told (memories, the turn's messages), besides ``query``.
        ``cancel`` set: :class:`~local2.errors.GaveWay` (no grade; grade it later)."""
        told = f"{query}\n{context}"
        flags = grounding_flags(answer, evidence, known_memory_ids, listing_tools, told)
        attempts = 1 + self.settings.retries
        try:
            grade = self.judge(query, answer, evidence, reference, cancel)
        except JudgeTimeout as exc:
            return {"score": None, "feedback": f"critic timed out: {exc}", "flags": flags}
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"[:300]
            return {"score": None, "feedback": f"critic failed: {reason}", "flags": flags}
        if grade.score is None:
            feedback = f"no grade after {attempts} attempt(s): {grade.reason}"
        else:
            feedback = grade.feedback[:_MAX_FEEDBACK_CHARS]
        return {"score": grade.score, "feedback": feedback, "flags": flags}


def make_critic(chat_model: BaseChatModel, settings: CriticSettings) -> Critic | None:
    """The critic for these settings, or ``None`` when ``enabled: false``: how the graph
    knows to skip the ``critique`` node's work."""
    return Critic(chat_model, settings) if settings.enabled else None
