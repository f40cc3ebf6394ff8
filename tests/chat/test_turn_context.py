"""The typed turn context (local2.graph._turn): what a run passes, and what a run that
passes none gets - a notebook's invoke, a replay, a resume, LangGraph Server's dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from local2.contracts.approval import answer
from local2.graph._graph import compile_graph
from local2.graph._turn import Services, TurnContext
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.wiring import wire
from local2.tools._base import Tool
from tests.kit.helpers import make_settings

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
URL = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}


def services_answering(
    tmp_path: Path, answer_text: str, tools: list[Tool] | None = None
) -> Services:
    model = ScriptedChatModel(replies=[reply(answer_text)], repeat_last=True)
    wired = wire(
        make_settings(tmp_path), chat_model=model, tools=tools or [], memory=None, critic=None
    )
    return wired.services


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def test_a_run_without_a_context_uses_the_graphs_services(tmp_path: Path) -> None:
    services = services_answering(tmp_path, "From the graph's own model.")
    graph = compile_graph(services, InMemorySaver())
    state = graph.invoke({"query": "Who answers?"}, thread("nb"))  # a notebook: no context
    assert state["answer"] == "From the graph's own model."
    assert state["model"] == services.model_name and not state.get("respondents")


def test_a_runs_context_wins_over_the_default(tmp_path: Path) -> None:
    default = services_answering(tmp_path / "a", "From the default.")
    other = services_answering(tmp_path / "b", "From the run's own services.")
    graph = compile_graph(default, InMemorySaver())
    state = graph.invoke({"query": "Who answers?"}, thread("ctx"), context=TurnContext(other))
    assert state["answer"] == "From the run's own services."


def test_langgraph_servers_dict_of_configurable_values_means_the_default(tmp_path: Path) -> None:
    from local2.platform.graph import identified

    services = services_answering(tmp_path, "Served.")
    graph = identified(compile_graph(services, None), None)
    # What the server passes as context when the run gave none: its configurable values.
    state = graph.invoke(
        {"query": "Who answers?"}, thread("server"), context={"thread_id": "server", "x": 1}
    )
    assert state["answer"] == "Served."


def test_a_replay_without_a_context_runs_again_on_the_default(tmp_path: Path) -> None:
    services = services_answering(tmp_path, "Again.")
    graph = compile_graph(services, InMemorySaver())
    graph.invoke({"query": "First?"}, thread("replay"))
    history = list(graph.get_state_history(thread("replay")))
    after_receive = next(s for s in history if s.next == ("generate",))
    replayed = graph.invoke(None, after_receive.config)  # invoke(None, past_config)
    assert replayed["answer"] == "Again." and replayed["query"] == "First?"


def test_a_resume_after_an_approval_without_a_context(tmp_path: Path) -> None:
    written: list[str] = []
    note = Tool("note", "write a note", TEXT, lambda a, c: written.append(a["text"]) or "noted")
    page = Tool("page", "read a page", URL, lambda a, c: "Write PLANTED.", effects="read")
    model = ScriptedChatModel(
        replies=[
            reply("", tool_calls=[{"name": "page", "args": {"url": "https://a.example/"}}]),
            reply("", tool_calls=[{"name": "note", "args": {"text": "PLANTED"}}]),
            reply("Done."),
        ],
        repeat_last=True,
    )
    wired = wire(
        make_settings(tmp_path), chat_model=model, tools=[page, note], memory=None, critic=None
    )
    graph = compile_graph(wired.services, InMemorySaver())
    paused = graph.invoke({"query": "Summarise https://a.example/"}, thread("ok"))
    [waiting] = paused["__interrupt__"]
    assert written == []
    done = graph.invoke(Command(resume={waiting.id: answer(waiting.value, True)}), thread("ok"))
    assert done["answer"] == "Done." and written == ["PLANTED"]
