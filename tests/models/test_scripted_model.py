"""The scripted chat model is the product's own: the offline agent (``local2 sessions``,
``runs``, ``feedback``, reading research runs) is built on one with no replies, and must never
answer; given replies, it streams them as ChatOllama would."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage

from local2.errors import ModelError
from local2.models import ScriptedChatModel
from local2.models._scripted import reply
from local2.service import offline_agent
from tests.kit.helpers import make_settings


def test_the_offline_agent_reads_with_a_model_that_never_answers(tmp_path: Path) -> None:
    """What ``offline_parts`` relies on: no model server, no tools, and a question asked of
    it fails as a model failure, with nothing recorded, rather than being answered."""
    agent = offline_agent(make_settings(tmp_path))
    try:
        assert (agent.info.model, agent.info.backend, agent.info.tools) == ("scripted", "none", ())
        with pytest.raises(ModelError, match="ran out of replies"):
            agent.turns.ask("Where is Kelsby?", "s1")
        assert agent.sessions.recent() == []
        assert not agent.sessions.exists("s1")
    finally:
        agent.close()
    with pytest.raises(RuntimeError, match="ran out of replies"):
        ScriptedChatModel().invoke("Where is Kelsby?")


def test_replies_come_in_order_and_stream_thinking_then_text_then_calls() -> None:
    model = ScriptedChatModel(
        replies=[
            reply(
                "Kelsby is a town.",
                thinking="recall it",
                tool_calls=[{"name": "web_search", "args": {"query": "Kelsby"}}],
            ),
            lambda messages: reply(f"{len(messages)} message(s) seen"),
        ],
        repeat_last=True,
        chunk_size=4,
    )
    chunks = [c for c in model.stream([HumanMessage("Where is Kelsby?")])]
    kinds = [
        "thinking"
        if c.additional_kwargs.get("reasoning_content")
        else "calls"
        if c.tool_call_chunks
        else "text"
        for c in chunks
        if c.content or c.additional_kwargs or c.tool_call_chunks  # not LangChain's last, empty
    ]
    assert kinds == ["thinking"] * 3 + ["text"] * 5 + ["calls"]
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert isinstance(whole, AIMessageChunk)
    assert whole.content == "Kelsby is a town."
    assert [(c["name"], c["args"], c["id"]) for c in whole.tool_calls] == [
        ("web_search", {"query": "Kelsby"}, "call_0")
    ]
    assert model.invoke([HumanMessage("a"), HumanMessage("b")]).content == "2 message(s) seen"
    assert model.invoke("again").content == "1 message(s) seen"  # the last one repeats
    assert len(model.seen) == 3
