"""A new tool is used everywhere by what it carries, with no other module told about it.

The tool below is defined here, as a tools-folder module would define it: its cue routes a
question to it for a model that cannot call tools, its extract quotes its result in a
fallback answer, and its evidence kind tells the grounding check that it only names files.
It then runs through the real agent (graph, keyword router, answer guard, critic).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from local2.config._schema import CriticSettings
from local2.critic import Critic
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.tools._base import Tool, ToolContext
from local2.tools._routing import Cue
from local2.tools._web import SEARCH_CUE
from tests.kit.helpers import make_settings

TIDES = "Harbour: Kelsby\nHigh water 06:12 and 18:40.\nChart: charts/kelsby.pdf"
_HARBOUR = re.compile(r"\btides? (?:at|in|for) (\w+)", re.I)


def _tide_args(query: str, today: dt.date) -> dict[str, Any] | None:
    m = _HARBOUR.search(query)
    return {"harbour": m.group(1)} if m else None


def _tide_extract(call: Mapping[str, Any]) -> list[str]:
    times = re.findall(r"\d\d:\d\d", str(call.get("result") or ""))
    return [f"High water at {call['args']['harbour']}: {' and '.join(times)}."] if times else []


def tide_tool(asked: list[dict[str, Any]]) -> Tool:
    def run(args: Mapping[str, Any], ctx: ToolContext) -> str:
        asked.append(dict(args))
        return TIDES

    schema = {
        "type": "object",
        "properties": {"harbour": {"type": "string"}},
        "required": ["harbour"],
    }
    return Tool(
        "tide_table",
        "High and low water for a harbour.",
        schema,
        run,
        effects="read",
        output="untrusted",
        cue=Cue(_tide_args, rank=15),
        extract=_tide_extract,
        evidence="listing",
    )


def search_tool(asked: list[dict[str, Any]]) -> Tool:
    def run(args: Mapping[str, Any], ctx: ToolContext) -> str:
        asked.append(dict(args))
        return "no results"

    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    return Tool("web_search", "Search the web.", schema, run, cue=SEARCH_CUE)


def agent_with(tmp_path: Path, replies: list, tides: list, searches: list) -> Agent:
    grader = ScriptedChatModel(replies=[reply("Feedback: Plausible. [RESULT] 4")], repeat_last=True)
    return Agent(
        make_settings(tmp_path),
        chat_model=ScriptedChatModel(replies=replies),
        tools=[tide_tool(tides), search_tool(searches)],
        memory=None,
        critic=Critic(grader, CriticSettings(timeout_s=10.0, retries=0)),
        native_tools=False,  # like the embedded model: the keyword router may step in
    )


def test_a_new_tools_cue_extract_and_evidence_are_used(tmp_path: Path) -> None:
    tides: list = []
    searches: list = []
    answer = "High water at Kelsby is at 06:12 today; see charts/kelsby.pdf."
    agent = agent_with(tmp_path, [reply("Let me check."), reply(answer)], tides, searches)
    try:
        payload = agent.turns.ask("When are the tides at Kelsby today?", "s1")
    finally:
        agent.close()
    # Its cue routed the question to it, and searching (the last resort) did not run,
    # although "today" would have sent the question to the web.
    assert "tool.routed" in payload["events"]
    assert tides == [{"harbour": "Kelsby"}] and searches == []
    assert payload["answer"] == answer
    # It only names the chart: the critic flags the file as unread.
    assert payload["critique"]["flags"] == ["unread file: charts/kelsby.pdf (never read this turn)"]


def test_a_new_tools_result_is_quoted_by_its_own_extract(tmp_path: Path) -> None:
    tides: list = []
    copied = f"<tool_output>\n{TIDES}\n</tool_output>"  # a small model parroting its input
    agent = agent_with(tmp_path, [reply("Let me check."), reply(copied)], tides, [])
    try:
        payload = agent.turns.ask("What are the tides at Kelsby?", "s1")
    finally:
        agent.close()
    assert payload["answer"].startswith("The model could not write an answer")
    assert payload["answer"].endswith("High water at Kelsby: 06:12 and 18:40.")
