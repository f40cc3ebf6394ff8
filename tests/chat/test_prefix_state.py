"""The embedded model's state after its fixed prompt start, saved and loaded between runs.

On the real SmolLM2 through llama.cpp: a new process (a new ``Llama``) that loads the saved
state answers exactly as one that read the prompt, and reads only the question's tokens.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from local2.models import _embedded as embedded
from local2.models import _prefix_state as prefix_state
from local2.models._embedded import EmbeddedChatModel, load_llama
from local2.service.warmup import prefix_state_dir, prompt_prefix_task
from tests.kit.helpers import make_settings

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

SYSTEM = "You are LoCAL2, a careful local research assistant. Answer concisely."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]
QUESTION = "What is the capital of France?"


def new_process_model() -> EmbeddedChatModel:
    """The model as a new process has it: a ``Llama`` that has read nothing."""
    with embedded._cache_lock:
        embedded._cache.clear()
    return EmbeddedChatModel(n_ctx=2048)


def answer(model: EmbeddedChatModel) -> tuple[str, int]:
    """A greedy answer to QUESTION, asked as the agent asks, and how many tokens llama.cpp
    read for it."""
    llama, _ = load_llama(model.resolved_path, model.n_ctx, model.n_threads)
    read: list[int] = []
    original = llama.eval
    llama.eval = lambda tokens: (read.append(len(tokens)), original(tokens))[1]
    try:
        reply = model.bind_tools(TOOLS).invoke(
            [SystemMessage(SYSTEM), HumanMessage(QUESTION)], max_tokens=24, temperature=0
        )
    finally:
        llama.eval = original
    return str(reply.content), sum(read)


def test_a_new_process_loads_the_saved_prefix_and_answers_the_same(tmp_path: Path) -> None:
    states = tmp_path / "states"
    first = new_process_model()
    assert first.warm_up(SYSTEM, TOOLS, state_dir=states) == "read and saved"
    saved = list(states.iterdir())
    assert [p.suffix for p in saved] == [prefix_state.SUFFIX]
    read_answer, read_tokens = answer(first)

    second = new_process_model()
    assert second.warm_up(SYSTEM, TOOLS, state_dir=states) == "loaded"
    loaded_answer, loaded_tokens = answer(second)

    cold = new_process_model()  # no warm-up: the whole prompt is read for the question
    _, cold_tokens = answer(cold)

    assert loaded_answer == read_answer and loaded_answer.strip()
    assert loaded_tokens == read_tokens < 40 < cold_tokens, (loaded_tokens, cold_tokens)


def test_a_damaged_or_stale_state_is_never_used(tmp_path: Path) -> None:
    states = tmp_path / "states"
    assert new_process_model().warm_up(SYSTEM, TOOLS, state_dir=states) == "read and saved"
    (path,) = states.iterdir()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a half-written file

    model = new_process_model()
    assert model.warm_up(SYSTEM, TOOLS, state_dir=states) == "read and saved"
    assert answer(model)[1] < 40  # read again, correctly
    assert new_process_model().warm_up(SYSTEM, TOOLS, state_dir=states) == "loaded"

    # Another system prompt, or another context size, is another file.
    assert new_process_model().warm_up(SYSTEM + " Be brief.", TOOLS, state_dir=states) == (
        "read and saved"
    )
    other_ctx = EmbeddedChatModel(n_ctx=1024)
    assert other_ctx.warm_up(SYSTEM, TOOLS, state_dir=states) == "read and saved"
    assert len(list(states.iterdir())) == 3


def test_only_the_newest_states_are_kept(tmp_path: Path) -> None:
    for i in range(prefix_state.KEEP + 2):
        path = tmp_path / f"{i}{prefix_state.SUFFIX}"
        path.write_bytes(b"x")
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))
    (tmp_path / "notes.txt").write_text("not a state")
    prefix_state.prune(tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted(
        ["notes.txt", *(f"{i}{prefix_state.SUFFIX}" for i in range(2, prefix_state.KEEP + 2))]
    )


def test_the_agent_warm_up_keeps_its_prompt_state_in_the_data_directory(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    runs = []
    for _ in range(2):  # two starts of the program on one data directory
        task = prompt_prefix_task(settings, new_process_model(), "embedded")
        assert task is not None
        runs.append(task())
    assert runs == ["read and saved", "loaded"]
    (saved,) = prefix_state_dir(settings).iterdir()
    assert saved.parent == settings.data_dir / "cache" / "prompt-state"


def test_a_question_asked_during_the_warm_up_waits_for_it(tmp_path: Path) -> None:
    states = tmp_path / "states"
    assert new_process_model().warm_up(SYSTEM, TOOLS, state_dir=states) == "read and saved"
    model = new_process_model()
    model.load()
    asked: list[tuple[str, int]] = []
    with model.warming_up():  # as the warm-up thread does while it imports the tool list
        question = threading.Thread(target=lambda: asked.append(answer(model)))
        question.start()
        time.sleep(0.5)  # without waiting, the question would take the model now
        how = model.warm_up(SYSTEM, TOOLS, state_dir=states)
    question.join(120)
    assert how == "loaded"
    assert asked and asked[0][1] < 40, asked  # it read only its own tokens


def test_after_another_prompt_the_saved_start_is_loaded_again(tmp_path: Path) -> None:
    """A critic that grades with the embedded model (``critic.grade_embedded``) shares it and
    runs its own prompt between turns; the next question then loads the saved start instead
    of reading it again."""
    model = new_process_model()
    assert model.warm_up(SYSTEM, TOOLS, state_dir=tmp_path) == "read and saved"
    first, _ = answer(model)
    grade = [SystemMessage("You grade answers from 1 to 5."), HumanMessage("Paris. Grade it.")]
    model.invoke(grade, max_tokens=4)
    again, read = answer(model)
    assert read < 40, read  # the question's own tokens only
    assert again == first
