"""Honest fallback answers: what a model writes that is not an answer never reaches the person,
an echo of the tool template is not a malformed call, and a repeated call ends the loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local2.graph._answer import (
    EARLIER_EXTRACT,
    RAW_OUTPUT,
    TEMPLATE_ECHO,
    UNEXECUTED_CALL,
    fallback_answer,
    unusable_reason,
    without_listing_lines,
    wrap_untrusted,
)
from local2.models._scripted import ScriptedChatModel, reply
from local2.models._toolcalls import describe_tools, repair_message
from local2.service.agent import Agent
from local2.tools._base import Tool
from local2.tools._memory_tools import save_extract
from local2.tools._web import SEARCH_CUE, fetch_extract, search_extract
from tests.kit.helpers import make_settings, tool_schemas

SCHEMAS = tool_schemas()
SEARCH_RESULT = (
    "Today's date: 2026-05-31\n\n"
    "[1] Title: Sodium-ion cells reach 200 Wh/kg\nSnippet: Researchers report sodium-ion "
    "cells with 200 Wh/kg energy density.\nURL: https://tech.example.net/sodium-ion-200\n\n"
    "[2] Title: Solid-state batteries next year\nSnippet: Two carmakers plan small fleets."
    "\nURL: https://auto.example.org/solid-state-2027"
)
PAGE_RESULT = (
    "URL: http://127.0.0.1:8000/bakery_hours.html\nExtracted text:\nHarbour Street Bakery is "
    "open at 6:45 every weekday morning.\n\nOn Saturdays we open at 8:00."
)
SEARCH = {"tool": "web_search", "args": {"query": "battery news"}, "result": SEARCH_RESULT}
FETCH = {"tool": "web_fetch", "args": {"url": "x"}, "result": PAGE_RESULT}
TOOLS = {  # what the tools say about quoting their results
    "web_search": Tool("web_search", "", {}, lambda a, c: "", extract=search_extract),
    "web_fetch": Tool("web_fetch", "", {}, lambda a, c: "", extract=fetch_extract),
    "save_memory": Tool("save_memory", "", {}, lambda a, c: "", extract=save_extract),
}
TEMPLATE = describe_tools([{"type": "function", "function": {"name": "web_search",
    "description": "Search the web.", "parameters": SCHEMAS["web_search"]}}])  # fmt: skip


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (SEARCH_RESULT, RAW_OUTPUT),
        (wrap_untrusted("web_search", SEARCH_RESULT), RAW_OUTPUT),
        ("Sure! <tool_output tool='web_fetch'>open at 6:45</tool_output>", RAW_OUTPUT),
        (PAGE_RESULT, RAW_OUTPUT),
        (f"Result of web_search:\n{SEARCH_RESULT}", RAW_OUTPUT),
        ("[tool error: search failed: 503]", RAW_OUTPUT),
        ("Here is what I found.\n[1] Sodium-ion\nSnippet: Researchers report", RAW_OUTPUT),
        (TEMPLATE, TEMPLATE_ECHO),
        (
            '<tool_call>{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}',
            TEMPLATE_ECHO,
        ),
        ("web_fetch(url*: string)\n" * 384, TEMPLATE_ECHO),
        ("- recall_memory(query: string, k: integer): Recall what was said", TEMPLATE_ECHO),
        (repair_message(["web_fetch: missing required argument 'url'"], SCHEMAS), TEMPLATE_ECHO),
        ('{"name": "web_search", "arguments": {"query": "news"}}', UNEXECUTED_CALL),
        (
            '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>',
            UNEXECUTED_CALL,
        ),
        ("I will look it up.\n<tool_call>", UNEXECUTED_CALL),
        ("web_fetch(url='https://example.org')", UNEXECUTED_CALL),
        ('{"name": "web_search", "arguments": "{\\"query\\": "', UNEXECUTED_CALL),
    ],
)
def test_what_is_not_an_answer_is_recognised(text: str, reason: str) -> None:
    assert unusable_reason(text, SCHEMAS) == reason


@pytest.mark.parametrize(
    "text",
    [
        "The capital of France is Paris.",
        "According to [1], sodium-ion cells reach 200 Wh/kg (https://tech.example.net/x).",
        "Sources:\n- https://a.example/1\n- https://b.example/2",
        '```python\nprint({"name": "web_search", "arguments": {}})\n```\nThat prints a dict.',
        "Use `list.reverse()` or slicing: `items[::-1]`.",
        "Today's date is not something I know; please check your clock.",
        "The URL: field of each result links to the source.",
        "You told me that your favourite colour is green.",
    ],
)
def test_real_answers_pass_untouched(text: str) -> None:
    assert unusable_reason(text, SCHEMAS) is None


def test_the_extract_quotes_titles_snippets_urls_and_the_page() -> None:
    text = fallback_answer(RAW_OUTPUT, [SEARCH, FETCH], TOOLS)
    assert text.startswith("The model could not write an answer (its reply was a copy of raw")
    assert '"battery news"' in text
    assert "1. Sodium-ion cells reach 200 Wh/kg — Researchers report" in text
    assert "   https://tech.example.net/sodium-ion-200" in text
    assert "From the page http://127.0.0.1:8000/bakery_hours.html:" in text
    assert "> Harbour Street Bakery is open at 6:45 every weekday morning." in text
    assert "Today's date" not in text and "Snippet:" not in text and "<tool" not in text
    # A model that copies this extract from its history later has not answered either.
    assert unusable_reason(text, SCHEMAS) == EARLIER_EXTRACT


def test_a_save_is_quoted_with_what_was_saved() -> None:
    # The embedded model's reply to "Remember that ..." is often the tool's own line.
    said = "Remember that my sister's name is Ines."
    call = {"tool": "save_memory", "args": {"text": said}, "error": None}
    text = fallback_answer(
        RAW_OUTPUT, [{**call, "result": "Saved to memory as [m4137aae64303]."}], TOOLS
    )
    assert text.endswith(f"Saved to memory as [m4137aae64303]:\n> {said}")
    odd = fallback_answer(RAW_OUTPUT, [{**call, "result": "Something else."}], TOOLS)
    assert odd.endswith("From save_memory:\n> Something else.")  # any other result: quoted


def test_without_results_the_model_plainly_could_not_answer() -> None:
    failed = {"tool": "web_search", "args": {}, "result": "[tool error: x]", "error": "x"}
    assert fallback_answer(TEMPLATE_ECHO, [], TOOLS) == (
        "The model could not answer this question: its reply was a copy of its tool "
        "instructions and is not shown."
    )
    assert fallback_answer(UNEXECUTED_CALL, [failed], TOOLS).endswith("web_search failed (x).")


# --------------------------------------------------------------------------- in the graph


def echo_tool(calls: list[dict[str, Any]]) -> Tool:
    schema = SCHEMAS["web_search"]

    def run(args: Any, ctx: Any) -> str:
        calls.append(dict(args))
        return SEARCH_RESULT

    return Tool(
        "web_search", "Search the web.", schema, run, cue=SEARCH_CUE, extract=search_extract
    )


def text_agent(tmp_path: Path, replies: list, calls: list, **gen: Any) -> Agent:
    """An agent whose model cannot call tools natively (like the embedded one)."""
    settings = make_settings(tmp_path, generator=gen) if gen else make_settings(tmp_path)
    return Agent(
        settings,
        chat_model=ScriptedChatModel(replies=replies),
        tools=[echo_tool(calls)],
        memory=None,
        critic=None,
        native_tools=False,
    )


def test_a_raw_tool_output_answer_becomes_a_labelled_extract(tmp_path: Path) -> None:
    calls: list = []
    agent = text_agent(tmp_path, [reply("Sure."), reply(SEARCH_RESULT)], calls)
    payload = agent.turns.ask("What are the latest developments in battery technology?", "s1")
    assert "tool.routed" in payload["events"] and len(calls) == 1
    assert payload["answer"].startswith("The model could not write an answer")
    assert "https://tech.example.net/sodium-ion-200" in payload["answer"]
    fallback = next(e for e in payload["event_log"] if e["subject"] == "answer.fallback")
    assert fallback["reason"] == RAW_OUTPUT
    assert (
        agent.sessions.history("s1")[0]["assistant"] == payload["answer"]
    )  # history holds the same


def test_a_copy_of_an_earlier_extract_is_replaced_by_this_turns(tmp_path: Path) -> None:
    calls: list = []
    agent = text_agent(tmp_path, [reply("Sure."), reply(SEARCH_RESULT)], calls)
    first = agent.turns.ask("What are the latest battery developments?", "s1")["answer"]
    agent.services.chat_model.replies.extend([reply("Sure."), reply(first)])  # parrots it
    second = agent.turns.ask("What is the latest battery news today?", "s1")
    assert second["answer"].startswith("The model could not write an answer (its reply was a copy")
    assert "an earlier extract" in second["answer"] and len(calls) == 2


ECHO = '<tool_call>{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}</tool_call>'


def _prompt_text(messages: list) -> str:
    return "\n".join(str(m.content) for m in messages)


def test_a_template_echo_is_asked_again_without_the_tools(tmp_path: Path) -> None:
    calls: list = []
    answer = "Photosynthesis turns light, water and carbon dioxide into sugar."
    agent = text_agent(tmp_path, [reply(ECHO), reply(answer)], calls)
    payload = agent.turns.ask("Explain photosynthesis.", "s1")
    assert "tool.repair" not in payload["events"] and "tool.withheld" in payload["events"]
    assert payload["answer"] == answer and calls == []
    first, second = agent.services.chat_model.seen
    assert "<tool name>" in _prompt_text(first)  # the tools were offered, then withheld
    assert "<tool name>" not in _prompt_text(second) and ECHO not in _prompt_text(second)


def test_a_second_template_echo_is_not_shown(tmp_path: Path) -> None:
    calls: list = []
    agent = text_agent(tmp_path, [reply(ECHO), reply(ECHO), reply("never asked")], calls)
    payload = agent.turns.ask("Explain photosynthesis.", "s1")
    assert payload["answer"] == (
        "The model could not answer this question: its reply was a copy of its tool "
        "instructions and is not shown."
    )
    assert len(agent.services.chat_model.seen) == 2 and calls == []


def test_prose_beside_a_stray_call_is_kept(tmp_path: Path) -> None:
    calls: list = []
    stray = (
        "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen in the "
        'chloroplasts of plant cells. {"name": "web_search", "arguments": {"query": '
    )
    agent = text_agent(tmp_path, [reply(stray), reply(stray)], calls)
    payload = agent.turns.ask("Explain photosynthesis.", "s1")
    assert "tool.repair" in payload["events"]  # a broken call is repaired once
    assert payload["answer"].startswith("Photosynthesis turns light")
    assert "{" not in payload["answer"] and calls == []


def test_an_identical_repeated_call_is_answered_from_the_first_and_ends_the_loop(
    tmp_path: Path,
) -> None:
    calls: list = []
    again = reply(
        '<tool_call>{"name": "web_search", "arguments": {"query": "battery"}}</tool_call>'
    )
    agent = text_agent(
        tmp_path, [again, again, reply("Sodium-ion cells reached 200 Wh/kg [1].")], calls
    )
    payload = agent.turns.ask("Battery news?", "s1")
    assert calls == [{"query": "battery"}]  # run once, never re-run
    assert len(payload["tool_calls"]) == 1
    repeated = next(e for e in payload["event_log"] if e["subject"] == "tool.repeated")
    assert repeated["tools"] == ["web_search"] and repeated["args"] == [{"query": "battery"}]
    assert payload["answer"] == "Sodium-ion cells reached 200 Wh/kg [1]."
    assert "tool.loop_limit" not in payload["events"]
    last_prompt = agent.services.chat_model.seen[-1]
    assert "You can use these tools:" not in str(last_prompt[0].content)  # no tools any more
    assert str(last_prompt[-2].content).count("Sodium-ion cells reach 200 Wh/kg") == 1
    assert "Do not call any more tools" in str(last_prompt[-1].content)


def test_a_call_written_after_the_loop_stopped_is_never_shown(tmp_path: Path) -> None:
    calls: list = []
    again = reply(
        '<tool_call>{"name": "web_search", "arguments": {"query": "battery"}}</tool_call>'
    )
    agent = text_agent(tmp_path, [again, again, again], calls)
    payload = agent.turns.ask("Battery news?", "s1")
    assert calls == [{"query": "battery"}]
    assert payload["answer"].startswith("The model could not write an answer (its reply was a")
    assert "tool call that was never run" in payload["answer"]
    assert "<tool_call>" not in payload["answer"]
    assert "1. Sodium-ion cells reach 200 Wh/kg" in payload["answer"]


def test_a_tool_capable_model_answering_directly_is_not_routed(tmp_path: Path) -> None:
    calls: list = []
    settings = make_settings(tmp_path)
    model = ScriptedChatModel(replies=[reply("I can answer this without searching.")])
    agent = Agent(settings, chat_model=model, tools=[echo_tool(calls)], memory=None, critic=None)
    payload = agent.turns.ask("What is the latest news about batteries today?", "s1")
    assert calls == [] and "tool.routed" not in payload["events"]
    assert payload["answer"] == "I can answer this without searching."
    assert model.bound_tools, "the capable model was offered the tools natively"


# ------------------------------------------------------ a recall listing copied after an answer

LISTING_ECHO = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "embedded_run" / "listing_echo.json").read_text()
)


def test_the_real_models_copied_recall_listing_is_cut_and_its_answer_kept() -> None:
    kept, cut = without_listing_lines(LISTING_ECHO["reply"])
    assert cut == 3 and "[m" not in kept and "similarity" not in kept
    assert kept.startswith("The user's sister's name is Ines.")
    files = "[1] notes/a.md (lines 3-9, similarity 0.71)\n    the snippet\nIt is 4."
    assert without_listing_lines(files) == ("It is 4.", 1)
    prose = "See [1] for details (similarity is high)."
    assert without_listing_lines(prose) == (prose, 0)


def test_in_the_graph_the_listing_never_reaches_the_answer(tmp_path: Path) -> None:
    agent = text_agent(tmp_path, [reply(LISTING_ECHO["reply"])], [])
    payload = agent.turns.ask(LISTING_ECHO["query"], "s1")
    assert payload["answer"].startswith("The user's sister's name is Ines.")
    assert "similarity" not in payload["answer"] and "answer.trimmed" in payload["events"]
    assert agent.sessions.history("s1")[0]["assistant"] == payload["answer"]


def test_a_reply_that_is_only_the_listing_gets_the_fallback(tmp_path: Path) -> None:
    only = "\n".join(LISTING_ECHO["reply"].splitlines()[1:3])
    agent = text_agent(tmp_path, [reply(only)], [])
    payload = agent.turns.ask(LISTING_ECHO["query"], "s1")  # no tool ran: nothing to extract
    assert payload["answer"].startswith("The model could not answer this question")
    assert "similarity" not in payload["answer"]
    assert {"answer.trimmed", "answer.fallback"} <= set(payload["events"])
