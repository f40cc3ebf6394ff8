"""An answer that nothing can check is not a memory (graph/_turn.py ``unchecked``).

The embedded demo model has no critic (it almost never writes a grade that parses), and its
prose is often wrong or nonsense; these answers are its real replies
(tests/fixtures/embedded_run/smollm2_outputs.json). Its answer is kept only when what the
turn's tools read supports every sentence of it, by the check research's verify uses; else
only the person's message is (its facts: a turn record with no answer is not made). An
answer graded by a critic, or one from a model whose critic was turned off by choice, is
kept as before. Real Chroma, real rule-based fact extraction.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from local2.graph._turn import UNCHECKED, Services, remember_turn
from local2.memory import EngramStore
from local2.memory._embedders import LexicalEmbedder
from tests.kit.helpers import make_settings

WEATHER = (
    "Weather in Lisbon today\nLisbon, Portugal: 20 °C now, sunny, a high of 24 °C and no rain "
    "expected."
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EngramStore]:
    opened = EngramStore.open(make_settings(tmp_path), LexicalEmbedder())
    yield opened
    opened.close()


def remembered(
    store: EngramStore, tmp_path: Path, backend: str, answer: str, results: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Remember one turn; its memory.ingested event, and the turn records stored."""
    services = Services(
        settings=make_settings(tmp_path),
        chat_model=FakeListChatModel(responses=["unused"]),
        turn_log=None,  # type: ignore[arg-type]
        memory=store,
        backend=backend,
    )
    state = {
        "query": "What is 17 times 23?" if not results else "What's the weather in Lisbon today?",
        "answer": answer,
        "session_id": "s1",
        "query_id": f"q-{len(store.list(500))}",
        "tool_calls": [
            {"id": "c1", "tool": "web_search", "args": {}, "result": r, "error": None}
            for r in results
        ],
        "started_at": 0.0,
    }
    update = remember_turn(state, services)  # type: ignore[arg-type]
    turns = [r for r in store.list(500) if r.get("kind") != "fact"]
    return update["event_log"][0], turns


def test_the_demo_models_unchecked_answer_is_not_kept(store: EngramStore, tmp_path: Path) -> None:
    said, turns = remembered(store, tmp_path, "embedded", "17 * 23 = 429\n\nThe answer is 429.", [])
    assert said["answer_not_kept"] == UNCHECKED
    assert turns == [] and said["id"] is None  # no turn record: it would hold only the reply
    assert "429" not in " ".join(r["content"] for r in store.list(500))


def test_the_demo_models_answer_is_kept_when_what_it_read_supports_it(
    store: EngramStore, tmp_path: Path
) -> None:
    answer = "Lisbon is 20 °C and sunny today, with a high of 24 °C."
    said, turns = remembered(store, tmp_path, "embedded", answer, [WEATHER])
    assert "answer_not_kept" not in said
    assert "A: Lisbon is 20 °C" in turns[0]["content"]
    # What it read does not say it: not kept.
    wrong = "Lisbon is 31 °C today, with storms over Porto."
    said, _ = remembered(store, tmp_path, "embedded", wrong, [WEATHER])
    assert said["answer_not_kept"] == UNCHECKED


def test_a_model_with_its_critic_off_by_choice_keeps_its_answers(
    store: EngramStore, tmp_path: Path
) -> None:
    said, turns = remembered(store, tmp_path, "ollama", "17 * 23 = 391.", [])
    assert "answer_not_kept" not in said
    assert "391" in turns[0]["content"]
