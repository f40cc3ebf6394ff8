"""The graph's nodes and routing, driven by a scripted chat model."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from local2.errors import InvalidQuery, ToolError
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.service.wiring import build_graph
from local2.tools._base import Tool
from tests.kit.helpers import make_settings, meet

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def echo_tool(name: str = "echo", delay: float = 0.0, timeout: float | None = None) -> Tool:
    def run(args: Any, ctx: Any) -> str:
        time.sleep(delay)
        return f"{name}: {args['text']}"

    return Tool(name, f"{name} tool", TEXT, run, timeout_s=timeout, effects="read")


def failing_tool() -> Tool:
    def run(args: Any, ctx: Any) -> str:
        raise ToolError("fetch failed: 503")

    return Tool("flaky", "fails", TEXT, run, effects="read")


def make_agent(tmp_path: Path, replies: list, tools: list[Tool] | None = None, **gen: Any) -> Agent:
    settings = make_settings(tmp_path, generator=gen) if gen else make_settings(tmp_path)
    model = ScriptedChatModel(replies=replies)
    return Agent(settings, chat_model=model, tools=tools or [], memory=None, critic=None)


def test_answer_without_tools_has_thinking_and_events(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [reply("Paris.", thinking="The capital of France is Paris.")])
    payload = agent.turns.ask("What is the capital of France?", "s1")
    assert payload["answer"] == "Paris."
    assert payload["thinking"] == "The capital of France is Paris."
    assert payload["tool_calls"] == []
    assert payload["events"][:1] == ["query.received"]
    assert {"response.generation", "answer.dialog"} <= set(payload["events"])
    times = [e["t"] for e in payload["event_log"]]
    assert times == sorted(times) and times[0] == 0.0
    dialog = next(e for e in payload["event_log"] if e["subject"] == "answer.dialog")
    assert dialog["answer"] == "Paris." and dialog["session_id"] == "s1"


def test_tool_round_trip_records_call_and_wraps_output(tmp_path: Path) -> None:
    model_replies = [
        reply("", thinking="look it up", tool_calls=[{"name": "echo", "args": {"text": "hi"}}]),
        reply("It said hi.", thinking="got it"),
    ]
    agent = make_agent(tmp_path, model_replies, [echo_tool()])
    payload = agent.turns.ask("say hi", "s1")
    assert payload["answer"] == "It said hi."
    [call] = payload["tool_calls"]
    assert call["tool"] == "echo" and call["args"] == {"text": "hi"}
    assert call["result"] == "echo: hi" and call["error"] is None and call["duration_s"] >= 0
    subjects = payload["events"]
    assert subjects.index("tool.request.echo") < subjects.index("tool.result.echo")
    second_prompt = agent.services.chat_model.seen[1]
    tool_msg = next(m for m in second_prompt if isinstance(m, ToolMessage))
    assert "untrusted" in tool_msg.content and "<tool_output" in tool_msg.content
    assert "echo: hi" in tool_msg.content


def test_concurrent_tool_calls_run_at_once(tmp_path: Path) -> None:
    # Each call waits until all three are running; one after the other, the first would
    # wait alone and the barrier would break, whatever the machine's speed.
    barrier = threading.Barrier(3)
    met: list[bool] = []

    def run(args: Any, ctx: Any) -> str:
        met.append(meet(barrier))
        return f"echo: {args['text']}"

    together = Tool("echo", "echo tool", TEXT, run, effects="read")
    calls = [{"name": "echo", "args": {"text": str(i)}, "id": f"c{i}"} for i in range(3)]
    agent = make_agent(tmp_path, [reply("", tool_calls=calls), reply("done")], [together])
    payload = agent.turns.ask("three at once", "s1")
    assert [c["result"] for c in payload["tool_calls"]] == ["echo: 0", "echo: 1", "echo: 2"]
    assert met == [True, True, True], "the three calls did not run at once"


def test_timeout_error_and_unknown_tool_resume_generation(tmp_path: Path) -> None:
    calls = [
        {"name": "slow", "args": {"text": "x"}, "id": "a"},
        {"name": "flaky", "args": {"text": "x"}, "id": "b"},
        {"name": "nope", "args": {}, "id": "c"},
    ]
    agent = make_agent(
        tmp_path,
        [reply("", tool_calls=calls), reply("Recovered.")],
        [echo_tool("slow", delay=3, timeout=0.3), failing_tool()],
    )
    payload = agent.turns.ask("try everything", "s1")
    by_tool = {c["tool"]: c for c in payload["tool_calls"]}
    assert by_tool["slow"]["result"] == "[tool timeout after 0.3s]"
    assert by_tool["flaky"]["result"] == "[tool error: fetch failed: 503]"
    assert by_tool["flaky"]["error"] == "fetch failed: 503"
    assert by_tool["nope"]["result"] == "[unknown tool: 'nope']"
    assert payload["answer"] == "Recovered."
    second = agent.services.chat_model.seen[1]
    contents = " ".join(str(m.content) for m in second if isinstance(m, ToolMessage))
    assert "[tool timeout after 0.3s]" in contents and "[unknown tool: 'nope']" in contents


def test_loop_guard_forces_synthesis_without_tools(tmp_path: Path) -> None:
    looping = [
        reply("", tool_calls=[{"name": "echo", "args": {"text": f"again {i}"}}]) for i in range(3)
    ]  # each call new (a repeated identical call would end the loop sooner)
    model = ScriptedChatModel(replies=[*looping, reply("Best effort answer.")])
    settings = make_settings(tmp_path, generator={"max_tool_iterations": 3})
    agent = Agent(settings, chat_model=model, tools=[echo_tool()], memory=None, critic=None)
    payload = agent.turns.ask("loop forever", "s1")
    assert payload["answer"] == "Best effort answer."
    assert len(payload["tool_calls"]) == 3
    assert "tool.loop_limit" in payload["events"]
    assert len(model.bound_tools) == 3, "the forced synthesis must be made without tools"
    last_prompt = model.seen[-1]
    assert "answer now" in str(last_prompt[-1].content)


def test_follow_up_sees_history_but_never_thinking(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        replies=[
            reply("The GIL is the Global Interpreter Lock.", thinking="SECRET-THOUGHT-1"),
            reply("It was introduced to make memory management safe.", thinking="t2"),
        ]
    )
    settings = make_settings(tmp_path)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    agent.turns.ask("Tell me about the Python GIL.", "s1")
    agent.turns.ask("Why was it introduced?", "s1")
    second_prompt: list[BaseMessage] = model.seen[1]
    texts = [str(m.content) for m in second_prompt]
    assert "Tell me about the Python GIL." in texts
    assert "The GIL is the Global Interpreter Lock." in texts
    assert not any("SECRET-THOUGHT-1" in str(m) for m in second_prompt)
    for m in second_prompt:
        if isinstance(m, AIMessage):
            assert "reasoning_content" not in m.additional_kwargs
    history = agent.sessions.history("s1")
    assert [h["user"] for h in history] == [
        "Tell me about the Python GIL.",
        "Why was it introduced?",
    ]
    assert all("SECRET" not in h["assistant"] for h in history)


def test_history_window_is_trimmed_to_max_turns(tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[reply("ok")], repeat_last=True)
    settings = make_settings(tmp_path, generator={"max_turns": 3})
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    for i in range(6):
        agent.turns.ask(f"question {i}", "s1")
    last_prompt = [str(m.content) for m in model.seen[-1]]
    assert "question 5" in last_prompt and "question 2" in last_prompt
    assert "question 1" not in last_prompt


def test_inline_thinking_is_moved_out_of_the_answer(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [reply("<think>weighing options</think>Paris.")])
    payload = agent.turns.ask("capital?", "s1")
    assert payload["answer"] == "Paris." and payload["thinking"] == "weighing options"


def test_empty_and_overlong_queries_are_refused(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [reply("never")], max_query_chars=50)
    with pytest.raises(InvalidQuery, match="empty"):
        agent.turns.ask("   ", "s1")
    with pytest.raises(InvalidQuery, match="limit is 50"):
        agent.turns.ask("x" * 51, "s1")
    # The graph itself refuses too (notebook use), ending the turn with an error.
    graph = agent.graph
    state = graph.invoke({"query": ""}, {"configurable": {"thread_id": "s2"}})
    assert "empty" in state["error"]
    assert [e["subject"] for e in state["event_log"]] == ["query.rejected"]


def test_text_tool_call_is_parsed_and_repair_sent_once(tmp_path: Path) -> None:
    bad = reply('<tool_call>{"name": "echo", "arguments": {"wrong": 1}}</tool_call>')
    good = reply('<tool_call>{"name": "echo", "arguments": {"text": "ok"}}</tool_call>')
    agent = make_agent(tmp_path, [bad, good, reply("Echoed ok.")], [echo_tool()])
    payload = agent.turns.ask("echo please", "s1")
    assert payload["answer"] == "Echoed ok."
    assert payload["tool_calls"][0]["args"] == {"text": "ok"}
    assert "tool.repair" in payload["events"]


def test_missing_session_gets_a_new_one(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [reply("a"), reply("b")])
    first = agent.turns.ask("one")
    second = agent.turns.ask("two")
    assert first["session_id"] and second["session_id"]
    assert first["session_id"] != second["session_id"]


def test_build_graph_python_api_and_replay(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    model = ScriptedChatModel(replies=[reply("first"), reply("second"), reply("replayed")])
    graph = build_graph(
        settings, chat_model=model, tools=[], checkpointer=InMemorySaver(), memory=None, critic=None
    )
    config = {"configurable": {"thread_id": "nb"}}
    assert graph.invoke({"query": "q1"}, config)["answer"] == "first"
    assert graph.invoke({"query": "q2"}, config)["answer"] == "second"
    past = next(
        s
        for s in graph.get_state_history(config, limit=50)
        if s.next == ("generate",) and s.values["query"] == "q2"
    )
    replayed = graph.invoke(None, past.config)
    assert replayed["answer"] == "replayed"
    assert graph.get_state(config).values["answer"] == "replayed"


def test_two_sessions_do_not_mix_when_run_together(tmp_path: Path) -> None:
    def answer(messages: list[BaseMessage]) -> AIMessage:
        time.sleep(0.2)
        return reply(f"echo {messages[-1].content}")

    model = ScriptedChatModel(replies=[answer], repeat_last=True)
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    results: dict[str, str] = {}

    def run(session: str) -> None:
        for i in range(3):
            results[f"{session}{i}"] = agent.turns.ask(f"{session}-{i}", session)["answer"]

    threads = [threading.Thread(target=run, args=(s,)) for s in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {f"{s}{i}": f"echo {s}-{i}" for s in "AB" for i in range(3)}
    assert [h["user"] for h in agent.sessions.history("A")] == ["A-0", "A-1", "A-2"]
