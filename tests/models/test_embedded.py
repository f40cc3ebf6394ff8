"""The embedded backend: the real SmolLM2-135M GGUF through llama-cpp-python."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from local2.config import load_settings
from local2.models import _embedded as embedded
from local2.models._embedded import (
    MODEL_NAME,
    EmbeddedChatModel,
    default_model_path,
    load_llama,
    to_chat_messages,
)
from local2.models._toolcalls import describe_tools


@tool
def web_search(query: str) -> str:
    """Search the web for current information.

    Second line that the compact description leaves out.
    """
    return ""


@pytest.fixture(scope="module")
def model() -> EmbeddedChatModel:
    return EmbeddedChatModel(max_tokens=40, temperature=0.0)


class Tokens(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)


# ------------------------------------------------------------------ no model needed


def test_the_gguf_ships_with_the_package():
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


def test_settings_configure_the_model(tmp_path):
    settings = load_settings(
        overrides={
            "system": {"data_dir": str(tmp_path)},
            "embedded": {"n_ctx": 1024, "max_tokens": 7, "temperature": 0.5},
        }
    )
    chat = embedded.make_embedded_chat(settings)
    assert (chat.n_ctx, chat.max_tokens, chat.temperature) == (1024, 7, 0.5)
    assert chat.model_name == MODEL_NAME == "smollm2-135m-instruct (embedded demo)"
    assert chat.resolved_path == str(default_model_path())


def test_tool_description_is_compact_and_names_the_call_format():
    text = describe_tools([{"type": "function", "function": {"name": "web_search",
        "description": "Search the web.\nMore.", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}}}}])  # fmt: skip
    assert "- web_search(query: string): Search the web." in text
    assert "More." not in text
    assert '<tool_call>{"name": "<tool name>", "arguments":' in text


def test_messages_map_to_the_chatml_roles():
    messages = [
        SystemMessage("Be brief."),
        HumanMessage("news?"),
        AIMessage("", tool_calls=[{"name": "web_search", "args": {"query": "q"}, "id": "c1"}]),
        ToolMessage("[1] Title: something", tool_call_id="c1"),
    ]
    out = to_chat_messages(messages, [_schema()])
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("Be brief.\n\nYou can use these tools:")
    assert (
        "- web_search(query: string): Search the web for current information." in out[0]["content"]
    )
    assert out[2]["content"] == (
        '<tool_call>{"name": "web_search", "arguments": {"query": "q"}}</tool_call>'
    )
    assert out[3]["content"] == "Result of web_search:\n[1] Title: something"


def _schema() -> dict[str, Any]:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return convert_to_openai_tool(web_search)


def test_missing_extra_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ImportError, match=r"pip install 'local2\[embedded\]'"):
        load_llama("/nonexistent/never-cached.gguf", 512, None)


def test_missing_model_file_is_a_clear_error(tmp_path):
    pytest.importorskip("llama_cpp")
    chat = EmbeddedChatModel(model_path=str(tmp_path / "absent.gguf"))
    with pytest.raises(FileNotFoundError, match=r"absent\.gguf"):
        chat.invoke("hi")


# ------------------------------------------------------------------ the real model


@pytest.mark.slow
def test_real_answer_from_smollm2(model):
    answer = model.invoke("What is the capital of France?")
    assert isinstance(answer.content, str) and answer.content.strip()
    assert answer.usage_metadata["output_tokens"] > 0
    assert answer.response_metadata["model_name"] == MODEL_NAME


@pytest.mark.slow
def test_streaming_yields_several_chunks_and_callbacks(model):
    handler = Tokens()
    chunks = list(
        model.stream("Write one sentence about the sea.", config={"callbacks": [handler]})
    )
    pieces = [c.content for c in chunks if c.content]
    assert len(pieces) > 3
    assert [t for t in handler.tokens if t] == pieces  # what LangGraph's messages mode reads
    merged = sum(chunks[1:], chunks[0])
    assert merged.response_metadata["finish_reason"] in ("stop", "length")


@pytest.mark.slow
def test_bind_tools_puts_the_description_into_the_prompt(model):
    question = [SystemMessage("Be brief."), HumanMessage("Find the latest news about Mars.")]
    plain = model.invoke(question)
    with_tools = model.bind_tools([web_search]).invoke(question)
    added = "\n\n" + describe_tools([_schema()])
    extra = len(model.load().tokenize(added.encode(), add_bos=False))
    grown = with_tools.usage_metadata["input_tokens"] - plain.usage_metadata["input_tokens"]
    # The whole description reached the model (give or take a token where the texts join).
    assert abs(grown - extra) <= 2
    assert isinstance(with_tools.content, str)


@pytest.mark.slow
def test_langgraph_messages_stream_sees_the_tokens(model):
    from langgraph.graph import START, MessagesState, StateGraph

    def generate(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("generate", generate)
    graph.add_edge(START, "generate")
    app = graph.compile()
    streamed = [
        chunk.content
        for chunk, _meta in app.stream(
            {"messages": [HumanMessage("Say hello.")]}, stream_mode="messages"
        )
        if chunk.content
    ]
    assert len(streamed) > 1
