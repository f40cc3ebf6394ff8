"""``critic.grade_embedded`` in an eval run, on the real SmolLM2 through llama.cpp.

Runs answered by the embedded demo model are graded by ``match`` (no model) unless
``critic.grade_embedded`` is true; then the embedded model grades its own answers, its reply
held by a grammar to ``{"grade": ...}`` alone, asked once (no retries), and the run says the
grader is the answering model. A recorder on the model sees every grading call as llama.cpp
answered it: the grade in each result must be the one the model gave.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from local2.evals import DEMO_PATH, load_set
from local2.evals._grading import MATCH, PROMPT_VERSION
from local2.models._embedded import MODEL_NAME, EmbeddedChatModel
from local2.service.agent import Agent
from local2.service.evals._evals import Evals
from local2.service.evals._setup import GRADE_MAX_TOKENS, GRADE_SCHEMA, make_grader
from tests.kit.helpers import make_settings

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

GRADING = "You are grading one answer to a quiz question"
QUESTIONS = load_set(DEMO_PATH).questions[:3]
GRADES = {"CORRECT": "correct", "INCORRECT": "incorrect", "NOT_ATTEMPTED": "not_attempted"}


class GradingCalls(BaseCallbackHandler):
    """Each grading call to the model: what it was asked with and what llama.cpp replied."""

    run_inline = True

    def __init__(self) -> None:
        self.asked: dict[UUID, tuple[str, dict[str, Any]]] = {}
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        prompt = str(messages[0][-1].content)
        if prompt.startswith(GRADING):
            self.asked[run_id] = (prompt, dict(invocation_params or {}))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id in self.asked:
            prompt, params = self.asked.pop(run_id)
            self.calls.append((prompt, params, response.generations[0][0].text))


@pytest.fixture
def embedded_evals(tmp_path: Path) -> Iterator[tuple[Evals, GradingCalls, Agent]]:
    settings = make_settings(
        tmp_path, critic={"grade_embedded": True}, memory={"embedder": "lexical"}
    )
    model = EmbeddedChatModel.from_settings(settings)
    recorder = GradingCalls()
    model.callbacks = [recorder]
    parts: dict[str, Any] = {"chat_model": model, "backend": "embedded", "model": MODEL_NAME}
    agent = Agent(settings, **parts)
    yield Evals(settings, agent.access, base=agent, **parts), recorder, agent
    agent.close()


def test_with_grade_embedded_the_embedded_model_grades_its_answers_held_to_a_grade(
    embedded_evals: tuple[Evals, GradingCalls, Agent],
) -> None:
    evals, recorder, _ = embedded_evals
    items = list(evals.start("demo", limit=len(QUESTIONS)))
    final = next(data for kind, data in items if kind == "final")
    assert final["status"] == "done", final
    grader = final["manifest"]["grader"]
    assert (grader["model"], grader["backend"], grader["is_answerer"]) == (
        MODEL_NAME,
        "embedded",
        True,
    )
    assert grader["prompt_version"] == PROMPT_VERSION

    results = evals.show(final["manifest"]["run_id"])["results"]
    asked = [r for r in results if r["answer"].strip()]  # an empty answer is graded unasked
    assert asked, "the embedded model gave no answer to grade"
    # Asked once per answer (no retries), each call held to the grade and nothing else.
    assert len(recorder.calls) == len(asked)
    replied: dict[str, str] = {}
    for prompt, params, reply in recorder.calls:
        fmt = params.get("response_format") or {}
        assert fmt.get("json_schema", {}).get("schema") == GRADE_SCHEMA, params
        assert params.get("max_tokens") == GRADE_MAX_TOKENS
        grade = json.loads(reply)["grade"]  # the grammar: a JSON object, one of three grades
        assert set(json.loads(reply)) == {"grade"} and grade in GRADES
        question = prompt.split("<question>\n", 1)[1].split("\n</question>", 1)[0]
        replied[question] = GRADES[grade]
    # Every result carries the grade the model gave it: none ungraded, none by match.
    for record in asked:
        assert record["grade"] == replied[record["question"]], record
    assert final["summary"]["ungraded"] == 0


def test_without_grade_embedded_the_embedded_models_runs_are_graded_by_match(
    embedded_evals: tuple[Evals, GradingCalls, Agent],
) -> None:
    evals, _, agent = embedded_evals
    off = evals.settings.model_copy(
        update={"critic": evals.settings.critic.model_copy(update={"grade_embedded": False})}
    )
    assert make_grader(off, agent.services).model == MATCH
    on = make_grader(evals.settings, agent.services)
    assert (on.model, on.backend) == (MODEL_NAME, "embedded")
