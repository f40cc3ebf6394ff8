"""The warm-up reads the embedded model's fixed prompt start, so the first question does not.

Measured on the real SmolLM2 through llama.cpp: the tokens the model evaluates for the first
turn, with and without the warm-up having run (llama.cpp reuses the longest prefix it read).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from local2.memory._embedders import MiniLMEmbedder, _load_minilm
from local2.models._embedded import load_llama
from local2.service.agent import Agent
from local2.service.warmup import Warmup, embedder_task, prompt_prefix_task
from tests.kit.helpers import make_settings

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def evaluated_tokens(agent: Agent, question: str) -> int:
    """Tokens llama.cpp evaluates until the first answer token of a turn."""
    model = agent.services.chat_model
    llama, _ = load_llama(model.resolved_path, model.n_ctx, model.n_threads)
    counted: list[int] = []
    original = llama.eval
    llama.eval = lambda tokens: (counted.append(len(tokens)), original(tokens))[1]
    try:
        for kind, _data in agent.turns.stream(question, None):
            if kind == "token":
                break
    finally:
        llama.eval = original
    return sum(counted)


def test_first_turn_reads_only_its_own_tokens_after_the_warm_up(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "lexical"})
    agent = Agent(settings, backend="embedded", critic=None)
    try:
        model = agent.services.chat_model
        llama, _ = load_llama(model.resolved_path, model.n_ctx, model.n_threads)
        llama.reset()  # nothing read yet, as in a new process
        cold = evaluated_tokens(agent, "What is the capital of France?")
        llama.reset()
        warm = Warmup()
        task = prompt_prefix_task(settings, model, "embedded")
        assert task is not None
        warm.add("prompt prefix", task)
        warm.join(120)
        warmed = evaluated_tokens(agent, "What is the capital of France?")
    finally:
        agent.close()
    assert cold > 250, cold  # system prompt and tool list: ~330 tokens
    assert warmed < 40, (cold, warmed)  # only the question and the turn's markup


def test_no_warm_up_for_models_without_one_and_embedder_loads_in_background(
    tmp_path: Path,
) -> None:
    assert prompt_prefix_task(make_settings(tmp_path), object()) is None
    assert embedder_task(None) is None
    _load_minilm.cache_clear()
    store = type("Store", (), {"embedder": MiniLMEmbedder()})()
    task = embedder_task(store)
    assert task is not None
    warm = Warmup()
    warm.add("embedding model", task)
    warm.join(120)
    assert _load_minilm.cache_info().currsize == 1  # the weights are in memory now


def test_a_paused_warm_up_runs_nothing_until_started() -> None:
    ran: list[str] = []
    warm = Warmup(paused=True)
    warm.add("first", lambda: ran.append("first"))
    warm.join(0.2)
    assert ran == []  # held while the app is still being built
    warm.start()
    warm.add("second", lambda: ran.append("second"))
    warm.join(10)
    warm.join(10)  # a task added while the first ran may be on a new thread
    assert ran == ["first", "second"]
