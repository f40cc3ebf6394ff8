"""The embedded model's repetition guard, on what SmolLM2-135M really writes.

``tests/fixtures/embedded/smollm2_outputs.json`` holds real greedy outputs of the shipped
model with the guard off (made by ``capture.py`` beside it): five that fall into a loop
and four that do not. The guard must stop the first kind early and leave the second alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from local2.config import load_settings
from local2.models._embedded import REPETITION_NOTE, EmbeddedChatModel, RepetitionGuard

CAPTURED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "embedded" / "smollm2_outputs.json").read_text()
)


def streamed(text: str, size: int = 3) -> str | None:
    """Feed ``text`` as small stream pieces; what had been fed when the guard tripped."""
    guard = RepetitionGuard()
    for start in range(0, len(text), size):
        if guard.feed(text[start : start + size]):
            return guard.text
    return None


@pytest.mark.parametrize("case", CAPTURED, ids=[c["prompt"] for c in CAPTURED])
def test_loops_in_real_output_are_stopped_early_and_answers_are_left_alone(
    case: dict[str, Any],
) -> None:
    text = case["text"]
    kept = streamed(text)
    assert (kept is not None) == case["loops"]
    cut = RepetitionGuard().cut(text)  # not streamed: cut the same way, word for word
    assert (cut is None) == (kept is None)
    if kept is not None and cut is not None:
        assert text.startswith(kept) and len(kept) < len(text) / 2
        assert text.startswith(cut) and abs(len(cut) - len(kept)) <= 12


def test_tool_calls_and_number_sequences_are_not_loops() -> None:
    call = '<tool_call>{"name": "web_search", "arguments": {"query": "%s"}}</tool_call>\n'
    calls = "".join(call % q for q in ("mars news", "mars rover", "mars weather", "mars moons"))
    assert streamed(calls) is None
    assert streamed("Squares: " + ", ".join(str(n * n) for n in range(1, 200))) is None
    assert streamed("1. Pluto\n2. Pluto\n3. Pluto\n4. Pluto\n5. Pluto\n6. Pluto\n") is not None


def test_the_demo_token_cap_is_the_default() -> None:
    settings = load_settings()
    assert settings.embedded.max_tokens == 256
    assert EmbeddedChatModel.from_settings(settings).max_tokens == 256


@pytest.mark.slow
def test_the_real_model_is_stopped_when_it_loops() -> None:
    poem = next(c for c in CAPTURED if c["prompt"] == "Write a poem about the sea.")
    model = EmbeddedChatModel(max_tokens=600, temperature=0.0)
    chunks = list(model.stream([HumanMessage(poem["prompt"])]))
    merged = sum(chunks[1:], chunks[0])
    text = str(merged.content)
    assert text.endswith(REPETITION_NOTE)
    assert merged.response_metadata["finish_reason"] == "repetition"
    assert merged.response_metadata["pieces"] < 120  # of up to 600 tokens
    kept = text.removesuffix(REPETITION_NOTE)
    # Greedy: what the same model writes unguarded in this run, cut short. (Not the captured
    # text: another llama.cpp release writes another poem, which loops all the same.)
    # Three times as many tokens as the guard let through is enough to see the loop go on.
    pieces = merged.response_metadata["pieces"]
    unguarded = EmbeddedChatModel(max_tokens=3 * pieces, temperature=0.0, repetition_guard=False)
    looping = str(unguarded.invoke([HumanMessage(poem["prompt"])]).content)
    assert looping.startswith(kept) and len(kept) < len(looping) / 2
    whole = model.invoke([HumanMessage(poem["prompt"])])  # not streamed: cut the same way
    assert whole.content.endswith(REPETITION_NOTE)
    assert whole.response_metadata["finish_reason"] == "repetition"
