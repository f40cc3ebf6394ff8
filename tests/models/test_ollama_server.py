"""The fake Ollama server, driven by the real ``langchain_ollama`` and ``ollama`` clients."""

from __future__ import annotations

import json
import math
import os
import socket
import time

import httpx
import ollama
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_ollama import ChatOllama, OllamaEmbeddings

from local2_testkit.ollama_server import (
    FakeModel,
    FakeOllama,
    LoopBrain,
    Reply,
    RuleBrain,
    ScriptBrain,
)


@tool
def web_search(query: str) -> str:
    """Search the web for current information."""
    return ""


@tool
def web_fetch(url: str) -> str:
    """Fetch the main text of a web page."""
    return ""


@tool
def recall_memory(query: str) -> str:
    """Recall what was learned in earlier conversations."""
    return ""


SEARCH_RESULT = (
    "Today's date: 2026-05-31\n\n"
    "[1] Title: LoCAL2 adds Gemma tool calling\n"
    "Snippet: The LoCAL2 assistant now lets Gemma call tools natively.\n"
    "URL: https://example.org/local2-gemma\n\n"
    "[2] Title: Another page\n"
    "Snippet: Something else entirely.\n"
    "URL: https://example.com/other\n"
)
FETCH_RESULT = (
    "URL: https://example.org/local2-gemma\nExtracted text:\n"
    "Gemma models in LoCAL2 emit native tool calls through Ollama.\n"
    "A parser handles text tool calls for small models.\n"
)


@pytest.fixture
def srv():
    with FakeOllama() as server:
        yield server


def chat(server: FakeOllama, **kwargs) -> ChatOllama:
    kwargs.setdefault("reasoning", True)
    return ChatOllama(model="qwen3:4b", base_url=server.url, **kwargs)


def tool_turn(question: str, calls: list[tuple[str, dict, str]]) -> list:
    """A user question followed by assistant tool calls and their results."""
    messages: list = [HumanMessage(question)]
    for n, (name, args, result) in enumerate(calls):
        call_id = f"c{n}"
        messages.append(AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}]))
        messages.append(ToolMessage(result, tool_call_id=call_id))
    return messages


# ------------------------------------------------------------------ thinking and content


def test_reasoning_true_puts_thinking_apart_from_the_answer(srv):
    answer = chat(srv).invoke("What is the capital of France?")
    assert answer.content == "The capital of France is Paris."
    assert "Paris" in answer.additional_kwargs["reasoning_content"]
    assert "<think>" not in answer.content
    assert srv.chat_requests[-1]["think"] is True
    assert answer.usage_metadata["output_tokens"] > 0


def test_unset_think_gives_inline_thinking_like_qwen3(srv):
    answer = chat(srv, reasoning=None).invoke("What is the capital of France?")
    assert answer.content.startswith("<think>\n")
    assert answer.content.endswith("</think>\n\nThe capital of France is Paris.")
    assert "reasoning_content" not in answer.additional_kwargs
    assert "think" not in srv.chat_requests[-1]


@pytest.mark.parametrize(
    ("mode", "inline", "apart"),
    [("inline", True, False), ("none", False, False), ("field", False, True)],
)
def test_think_modes(mode, inline, apart):
    with FakeOllama(think_mode=mode) as server:
        answer = chat(server).invoke("What is the capital of France?")
    assert ("<think>" in answer.content) is inline
    assert ("reasoning_content" in answer.additional_kwargs) is apart
    assert answer.content.endswith("Paris.")


def test_reasoning_false_drops_thinking(srv):
    answer = chat(srv, reasoning=False).invoke("What is the capital of France?")
    assert answer.content == "The capital of France is Paris."
    assert "reasoning_content" not in answer.additional_kwargs


def test_streaming_sends_thinking_then_content_in_several_chunks(srv):
    chunks = list(chat(srv).stream("Tell me about the Python GIL."))
    thinking_chunks = [c for c in chunks if c.additional_kwargs.get("reasoning_content")]
    content_chunks = [c for c in chunks if c.content]
    assert len(thinking_chunks) > 3 and len(content_chunks) > 3
    assert all(not c.content for c in thinking_chunks)
    text = "".join(c.content for c in chunks)
    assert "Global Interpreter Lock" in text
    merged = sum(chunks[1:], chunks[0])
    assert merged.response_metadata["done_reason"] == "stop"
    assert merged.usage_metadata["output_tokens"] == len(thinking_chunks) + len(content_chunks)


def test_words_per_chunk_controls_the_pieces():
    with FakeOllama(words_per_chunk=1000) as server:
        chunks = list(chat(server).stream("What is the capital of France?"))
    assert [c.content for c in chunks if c.content] == ["The capital of France is Paris."]


def test_non_streaming_request_gets_one_merged_object(srv):
    client = ollama.Client(host=srv.url)
    response = client.chat(
        model="qwen3:4b",
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        think=True,
        stream=False,
    )
    assert response.done is True
    assert response.message.content == "The capital of France is Paris."
    assert "Paris" in (response.message.thinking or "")


def test_generate_endpoint_uses_the_same_brain(srv):
    response = ollama.Client(host=srv.url).generate(
        model="qwen3:4b", prompt="What is the capital of France?", think=True
    )
    assert response.response == "The capital of France is Paris."
    assert response.thinking


# ------------------------------------------------------------------ tool calls


def test_tool_call_arrives_whole_in_one_chunk_and_lands_in_tool_calls(srv):
    model = chat(srv).bind_tools([web_search, web_fetch, recall_memory])
    chunks = list(model.stream("What major AI news broke this week?"))
    with_calls = [c for c in chunks if c.tool_calls]
    assert len(with_calls) == 1
    answer = model.invoke("What major AI news broke this week?")
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [
        ("web_search", {"query": "What major AI news broke this week?"})
    ]
    assert answer.additional_kwargs["reasoning_content"]
    sent = srv.chat_requests[-1]["tools"]
    assert {t["function"]["name"] for t in sent} == {"web_search", "web_fetch", "recall_memory"}


def test_rule_brain_only_calls_offered_tools(srv):
    answer = chat(srv).invoke("What major AI news broke this week?")
    assert answer.tool_calls == []
    assert "not available" in answer.content


def test_top_result_flow_searches_then_fetches_then_summarises_the_page(srv):
    model = chat(srv).bind_tools([web_search, web_fetch])
    question = "Summarize the content of the top result for: LoCAL2 Gemma tool calling"
    first = model.invoke([HumanMessage(question)])
    assert first.tool_calls[0]["name"] == "web_search"
    after_search = model.invoke(
        tool_turn(question, [("web_search", first.tool_calls[0]["args"], SEARCH_RESULT)])
    )
    assert after_search.tool_calls[0]["name"] == "web_fetch"
    assert after_search.tool_calls[0]["args"] == {"url": "https://example.org/local2-gemma"}
    final = model.invoke(
        tool_turn(
            question,
            [
                ("web_search", {"query": question}, SEARCH_RESULT),
                ("web_fetch", {"url": "https://example.org/local2-gemma"}, FETCH_RESULT),
            ],
        )
    )
    assert final.tool_calls == []
    assert "emit native tool calls through Ollama" in final.content
    assert "https://example.org/local2-gemma" in final.content


def test_search_result_answer_quotes_the_snippet_and_url(srv):
    model = chat(srv).bind_tools([web_search])
    question = "What major AI news broke this week?"
    answer = model.invoke(tool_turn(question, [("web_search", {"query": question}, SEARCH_RESULT)]))
    assert answer.tool_calls == []
    assert "lets Gemma call tools natively" in answer.content
    assert "https://example.org/local2-gemma" in answer.content
    assert "Today's date" not in answer.content


def test_tool_error_is_reported_not_invented(srv):
    question = "Fetch https://example.org/missing please"
    model = chat(srv).bind_tools([web_fetch])
    assert model.invoke(question).tool_calls[0]["args"] == {"url": "https://example.org/missing"}
    answer = model.invoke(
        tool_turn(question, [("web_fetch", {"url": "x"}, "[tool error: fetch failed: 404]")])
    )
    assert "fetch failed: 404" in answer.content and "failed" in answer.content


def test_recall_calls_the_memory_tool_and_answers_from_its_result(srv):
    question = "What did I tell you about my favourite colour?"
    model = chat(srv).bind_tools([recall_memory])
    call = model.invoke(question).tool_calls[0]
    assert call["name"] == "recall_memory" and call["args"] == {"query": question}
    memory = "<memory id=1>\nUser: my favourite colour is teal.\n</memory>"
    answer = model.invoke(tool_turn(question, [("recall_memory", call["args"], memory)]))
    assert "teal" in answer.content


def test_favourite_statement_is_acknowledged(srv):
    answer = chat(srv).bind_tools([recall_memory]).invoke("My favourite colour is teal.")
    assert answer.tool_calls == []
    assert "teal" in answer.content


def test_pronoun_resolves_only_with_history(srv):
    model = chat(srv)
    first = model.invoke("Tell me about the Python GIL.")
    assert "Global Interpreter Lock" in first.content
    with_history = model.invoke(
        [
            HumanMessage("Tell me about the Python GIL."),
            first,
            HumanMessage("Why was it introduced?"),
        ]
    )
    assert "thread-safe" in with_history.content
    assert "What do you mean" not in with_history.content
    alone = model.invoke([HumanMessage("Why was it introduced?")])
    assert "What do you mean by 'it'" in alone.content
    # A system prompt is not history: the referent must come from the conversation.
    system_only = model.invoke(
        [SystemMessage("Topic hint: the GIL."), HumanMessage("Why was it introduced?")]
    )
    assert "What do you mean" in system_only.content


def test_text_tool_style_writes_tagged_calls_in_content():
    with FakeOllama(brain=RuleBrain(tool_style="text")) as server:
        answer = chat(server).bind_tools([web_search]).invoke("Latest news on Mars?")
    assert answer.tool_calls == []
    assert answer.content.startswith('<tool_call>{"name": "web_search", "arguments": {"query":')
    assert answer.content.endswith("</tool_call>")


def test_judge_prompt_gets_a_prometheus_style_grade(srv):
    prompt = (
        "###Task Description:\n...[RESULT] (an integer number between 1 and 5)\n\n"
        "###Response to evaluate:\n{answer}\n\n###Score Rubrics:\n...\n\n###Feedback: "
    )
    good = chat(srv).invoke(prompt.format(answer="The capital of France is Paris."))
    weak = chat(srv).invoke(prompt.format(answer="What do you mean by 'it'?"))
    assert good.content.startswith("Feedback: ") and good.content.endswith("[RESULT] 4")
    assert weak.content.endswith("[RESULT] 2")


# ------------------------------------------------------------------ scripted brains


def test_script_brain_replays_in_order_then_fails_loudly():
    script = ScriptBrain(
        [
            Reply(thinking="t1", tool_calls=[{"name": "web_search", "arguments": {"query": "q"}}]),
            "plain answer",
            lambda request: Reply(content=f"saw {len(request['messages'])} message(s)"),
        ]
    )
    with FakeOllama(brain=script) as server:
        model = chat(server).bind_tools([web_search])
        assert model.invoke("x").tool_calls[0]["args"] == {"query": "q"}
        assert model.invoke("x").content == "plain answer"
        assert model.invoke("x").content == "saw 1 message(s)"
        with pytest.raises(ollama.ResponseError) as info:
            model.invoke("x")
    assert info.value.status_code == 500
    assert "no reply left" in info.value.error


def test_loop_brain_never_stops_calling_tools_until_tools_are_withdrawn():
    with FakeOllama(brain=LoopBrain()) as server:
        model = chat(server).bind_tools([web_search, web_fetch])
        queries = [model.invoke("anything").tool_calls[0]["args"]["query"] for _ in range(3)]
        synthesis = chat(server).invoke("anything")
    assert queries == ["loop 1", "loop 2", "loop 3"]
    assert synthesis.tool_calls == [] and "Forced synthesis" in synthesis.content


# ------------------------------------------------------------------ errors and failures


def test_unknown_model_is_a_404_response_error_with_ollamas_text(srv):
    model = ChatOllama(model="llama9:1b", base_url=srv.url)
    with pytest.raises(ollama.ResponseError) as info:
        model.invoke("hi")
    assert info.value.status_code == 404
    assert info.value.error == 'model "llama9:1b" not found, try pulling it first'
    with pytest.raises(ollama.ResponseError) as shown:
        ollama.Client(host=srv.url).show("llama9:1b")
    assert shown.value.status_code == 404 and "llama9:1b" in shown.value.error


def test_validate_model_on_init_uses_the_tag_list(srv):
    ChatOllama(model="qwen3:4b", base_url=srv.url, validate_model_on_init=True)
    with pytest.raises(ValueError, match="ollama pull missing"):
        ChatOllama(model="missing", base_url=srv.url, validate_model_on_init=True)


def test_dropped_connection_raises_and_the_server_keeps_serving():
    with FakeOllama(drop_after_chunks=3) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            chat(server).invoke("Tell me about the Python GIL.")
        server.drop_after_chunks = None
        assert "Paris" in chat(server).invoke("What is the capital of France?").content


def test_a_single_reply_can_be_dropped():
    script = ScriptBrain([Reply(content="a b c d e f", drop_after_chunks=2), "fine"])
    with FakeOllama(brain=script) as server:
        with pytest.raises(httpx.HTTPError):
            list(chat(server).stream("x"))
        assert chat(server).invoke("x").content == "fine"


def test_delay_trips_the_client_timeout_and_stop_does_not_hang():
    with FakeOllama(delay_s=5.0) as server:
        slow = chat(server, client_kwargs={"timeout": 0.3})
        with pytest.raises(httpx.ReadTimeout):
            slow.invoke("What is the capital of France?")


def test_a_long_run_with_many_open_files_still_gets_answers():
    """A whole test run holds well over 1024 descriptors; the server's check for a client
    that went away once used select(), which refuses those, and died without answering."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with FakeOllama(delay_s=1.0) as server:
            slow = chat(server, client_kwargs={"timeout": 0.3})
            with pytest.raises(httpx.ReadTimeout):  # not "disconnected without a response"
                slow.invoke("What is the capital of France?")
            assert server.errors == [] or all("went away" in e for e in server.errors)
            assert chat(server).invoke("What is the capital of France?").content
    finally:
        for fd in held:
            os.close(fd)


def test_server_down_is_a_connect_error():
    with FakeOllama() as server:
        url = server.url
    # The streaming path of the ollama client lets httpx's error through unmapped.
    with pytest.raises(httpx.ConnectError):
        ChatOllama(model="qwen3:4b", base_url=url).invoke("hi")


def test_brain_exception_becomes_http_500_and_is_recorded():
    def broken(request):
        raise RuntimeError("kaboom")

    with FakeOllama(brain=broken) as server:
        with pytest.raises(ollama.ResponseError) as info:
            chat(server).invoke("x")
        assert server.errors and "kaboom" in server.errors[0]
    assert info.value.status_code == 500


def test_chat_with_an_embedding_model_is_refused(srv):
    with pytest.raises(ollama.ResponseError) as info:
        ChatOllama(model="nomic-embed-text", base_url=srv.url).invoke("hi")
    assert info.value.status_code == 400


# ------------------------------------------------------------------ metadata endpoints


def test_root_version_tags_and_show(srv):
    assert httpx.get(srv.url).text == "Ollama is running"
    assert httpx.head(srv.url).status_code == 200
    assert httpx.get(f"{srv.url}/api/version").json()["version"]
    client = ollama.Client(host=srv.url)
    assert [m.model for m in client.list().models] == [
        "gemma4:12b",
        "qwen3:4b",
        "nomic-embed-text:latest",
    ]
    shown = client.show("qwen3:4b")
    assert "tools" in shown.capabilities and "thinking" in shown.capabilities
    assert client.show("nomic-embed-text").capabilities == ["embedding"]
    gemma = client.show("gemma4:12b")
    assert gemma.modelinfo["gemma4.context_length"] == 131072
    assert gemma.details.parameter_size == "12B"
    assert httpx.get(f"{srv.url}/api/nothing").status_code == 404
    paths = [r.path for r in srv.log]
    assert paths[:3] == ["/", "/", "/api/version"]


def test_requests_are_held_to_each_models_capabilities():
    """Like Ollama: a model without ``tools``/``thinking`` refuses them with HTTP 400."""
    plain = FakeModel("gemma3:1b", ("completion",), context_length=32768, parameter_size="1B")
    with FakeOllama(RuleBrain(), models=[plain, "qwen3:4b"]) as server:
        client = ollama.Client(host=server.url)
        shown = client.show("gemma3:1b")
        assert shown.capabilities == ["completion"]
        assert shown.modelinfo["gemma3.context_length"] == 32768
        search = {"type": "function", "function": {"name": "web_search", "parameters": {}}}
        with pytest.raises(ollama.ResponseError) as info:
            client.chat("gemma3:1b", [{"role": "user", "content": "news?"}], tools=[search])
        assert info.value.status_code == 400
        assert info.value.error == '"gemma3:1b" does not support tools'
        with pytest.raises(ollama.ResponseError) as info:
            client.chat("gemma3:1b", [{"role": "user", "content": "hi"}], think=True)
        assert info.value.error == '"gemma3:1b" does not support thinking'
        answer = client.chat("gemma3:1b", [{"role": "user", "content": "capital of France?"}])
        assert "Paris" in answer.message.content  # without tools or think it answers
        server.add_model("llama3.2", capabilities=["completion", "tools"])
        assert client.show("llama3.2").capabilities == ["completion", "tools"]
        assert "llama3.2" in [m.model.split(":")[0] for m in client.list().models]
        client.chat("qwen3:4b", [{"role": "user", "content": "hi"}], tools=[search], think=True)


def test_custom_model_list():
    with FakeOllama(models=["gemma3:1b"]) as server:
        assert [m.model for m in ollama.Client(host=server.url).list().models] == ["gemma3:1b"]
        with pytest.raises(ollama.ResponseError):
            ChatOllama(model="qwen3:4b", base_url=server.url).invoke("hi")


# ------------------------------------------------------------------ embeddings


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_embeddings_are_deterministic_unit_vectors_and_recorded(srv):
    embedder = OllamaEmbeddings(model="nomic-embed-text", base_url=srv.url)
    docs = [
        "search_document: the cat sat on the mat",
        "search_document: quarterly tax filing deadlines",
    ]
    vectors = embedder.embed_documents(docs)
    query = embedder.embed_query("search_query: where did the cat sit")
    assert all(len(v) == 64 for v in [*vectors, query])
    assert all(math.isclose(cosine(v, v), 1.0, rel_tol=1e-9) for v in vectors)
    assert cosine(query, vectors[0]) > cosine(query, vectors[1])
    assert embedder.embed_documents(docs) == vectors
    bodies = srv.embed_requests
    assert bodies[0]["input"] == docs
    assert bodies[1]["input"][0].startswith("search_query: ")


def test_embed_dimensions_and_unknown_model(srv):
    client = ollama.Client(host=srv.url)
    short = client.embed(model="nomic-embed-text", input="hello world", dimensions=16)
    assert len(short.embeddings[0]) == 16
    assert math.isclose(cosine(short.embeddings[0], short.embeddings[0]), 1.0, rel_tol=1e-9)
    with pytest.raises(ollama.ResponseError) as info:
        client.embed(model="mxbai-embed-large", input="x")
    assert info.value.status_code == 404
    assert info.value.error == 'model "mxbai-embed-large" not found, try pulling it first'


def test_a_request_counts_from_its_first_line(srv):
    """``Served.started`` is when the request line was read: the server's own parsing of the
    rest is the model server's time, not the client's (``bench/overhead.py``)."""
    body = json.dumps({"model": "qwen3:4b", "messages": [{"role": "user", "content": "hi"}]})
    with socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(b"POST /api/chat HTTP/1.1\r\n")
        time.sleep(0.3)  # the headers and body come later
        rest_sent = time.perf_counter()
        conn.sendall(
            f"Host: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n{body}".encode()
        )
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
    deadline = time.monotonic() + 5
    while not srv.served and time.monotonic() < deadline:
        time.sleep(0.01)
    (served,) = srv.served
    assert served.started < rest_sent - 0.2 < served.ended
