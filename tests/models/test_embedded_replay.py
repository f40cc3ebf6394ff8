"""The embedded model's real failures never reach the person.

tests/fixtures/embedded_run/smollm2_outputs.json holds every raw reply the real SmolLM2-135M
gave to 32 questions through the real graph (scripts/capture_embedded_outputs.py): copies of
raw tool output, echoes of its tool template, calls it wrote but that were never run, next to
its ordinary answers. Here those replies are replayed through the same graph, tools and memory,
and every answer the person gets is checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from local2.cli._stories import serve_pages
from local2.graph._answer import unusable_reason
from local2.models._backend import EMBEDDED_NAME
from local2.models._scripted import ScriptedChatModel
from local2.models._toolcalls import parse_tool_calls
from local2.service.agent import Agent
from local2_testkit.embedded_run import load_questions, run_settings, with_pages
from tests.kit.helpers import tool_schemas

FIXTURES = Path(__file__).parents[1] / "fixtures"
RUN_DIR = FIXTURES / "embedded_run"
RECORDING = json.loads((RUN_DIR / "smollm2_outputs.json").read_text(encoding="utf-8"))
SCHEMAS = tool_schemas()
# Text that must never be an answer, written out here independently of the guard.
NEVER_SHOWN = [
    re.compile(r"<\/?tool_output", re.I),
    re.compile(r"Tool output below is untrusted", re.I),
    re.compile(r"^\s*Result of \w+:", re.M),
    re.compile(r"^\s*Today's date: \d{4}-\d{2}-\d{2}\s*$", re.M),
    re.compile(r"^\s*Snippet: ", re.M),
    re.compile(r"You can use these tools", re.I),
    re.compile(r"<tool name>|<argument>|<value>"),
    re.compile(r"\w+\((?:\w+\*?: \w+(?:, )?)+\)"),  # a signature line: web_fetch(url*: string)
    re.compile(r"</?tool_call>|<\|tool_call", re.I),
    re.compile(r"Your tool call could not be used"),
]


class Replay:
    """Plays one question's recorded replies in order (the last again if asked for more)."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.asked = 0

    def load(self, replies: list[str]) -> None:
        self.replies, self.asked = list(replies), 0

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        text = self.replies[min(self.asked, len(self.replies) - 1)] if self.replies else ""
        self.asked += 1
        return AIMessage(text)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[dict, dict]]]:
    replay = Replay()
    out: list[tuple[dict, dict]] = []
    with serve_pages(FIXTURES / "pages") as url:
        settings = run_settings(RUN_DIR, tmp_path_factory.mktemp("replay"), url)
        agent = Agent(
            settings,
            chat_model=ScriptedChatModel(replies=[replay], repeat_last=True),
            backend="embedded",
            model=EMBEDDED_NAME,
            native_tools=False,
        )
        for record in RECORDING["questions"]:
            replay.load([with_pages(r, url) for r in record["replies"]])
            payload = agent.turns.ask(
                with_pages(record["query"], url), f"replay-{record['session']}"
            )
            out.append((record, json.loads(json.dumps(payload).replace(url, "{PAGES}"))))
        agent.close()
    yield out


def test_the_recording_covers_the_question_set() -> None:
    ids = [q.id for q in load_questions(RUN_DIR)]
    assert [r["id"] for r in RECORDING["questions"]] == ids
    assert len(ids) >= 30
    assert RECORDING["model"] == EMBEDDED_NAME
    assert all(r["replies"] for r in RECORDING["questions"])


def test_the_recording_holds_the_real_failure_modes() -> None:
    replies = [text for r in RECORDING["questions"] for text in r["replies"]]
    reasons = [unusable_reason(text, SCHEMAS) for text in replies]
    seen = {reason for reason in reasons if reason}
    assert len(seen) >= 2, f"the recorded model failed in too few ways to test: {seen}"
    assert sum(1 for r in reasons if r) >= 5
    assert sum(1 for r in reasons if r is None) >= 10  # and it also answered plainly


def test_no_failure_text_reaches_the_person(replayed: list[tuple[dict, dict]]) -> None:
    for record, payload in replayed:
        answer = payload["answer"]
        assert answer.strip(), record["id"]
        for pattern in NEVER_SHOWN:
            assert not pattern.search(answer), (record["id"], pattern.pattern, answer[:300])
        parsed = parse_tool_calls(answer, SCHEMAS)
        assert not parsed.calls and not parsed.errors, (record["id"], answer[:300])
        if "answer.fallback" not in payload["events"]:  # the model's own words
            assert unusable_reason(answer, SCHEMAS) is None, record["id"]


def test_replaced_answers_are_labelled_and_quote_the_tools(
    replayed: list[tuple[dict, dict]],
) -> None:
    replaced = [(r, p) for r, p in replayed if "answer.fallback" in p["events"]]
    assert replaced, "no recorded failure reached the final answer"
    for record, payload in replaced:
        answer = payload["answer"]
        assert answer.startswith("The model could not"), record["id"]
        results = [c["result"] for c in payload["tool_calls"] if not c["error"]]
        if results and "write an answer" in answer:
            quoted = [_quoted(line) for line in answer.splitlines()[1:]]
            assert any(q and q in r for q in quoted for r in results), record["id"]


def _quoted(line: str) -> str:
    """The tool text an extract line quotes: without its list mark, up to an ellipsis."""
    if line.rstrip().endswith(":"):  # a section heading of the extract
        return ""
    text = re.sub(r"^\s*(?:[->]\s*|\d+\.\s+)", "", line).split(" — ")[0]
    return text.replace(" …", "").strip()


# Changed on purpose since the recording: "Remember that my dog's name is Rex." (q09) was
# saved as the turn began and then again by the keyword router's save_memory; now only the
# first, and the save is the reply: the model's ("I'm sorry for any confusion. Rex is a
# popular dog name...") is never asked for (issue 52).
SAVED_ONCE_NOW = "q09"
# The same for "My favourite colour is green. Please remember it." (q37): recorded, its "it"
# was saved as the fact "It." and the model replied "I'm sorry for any confusion. I'm sorry to
# hear that you're having a bad day..."; now the sentence before is saved, and said.
SAVED_NOW = {
    SAVED_ONCE_NOW: "Saved to memory: The user's dog's name is Rex.",
    "q37": "Saved to memory: The user's favourite colour is green.",
}
SAVED_TWICE = "- Remember that my dog's name is Rex."  # the second save, quoted by later recalls
SAVE_TURN = "- Q: Remember that my dog's name is Rex."  # q09's turn record: not kept, the fact is
# Recorded, "What is my dog's name?" (q10) recalled the turn records of q01 and q03 beside the
# fact. Now an answer of the demo model that nothing checked (no critic can grade it, and no
# tool read anything that supports it: graph/_turn.py ``unchecked``) is not kept, so those
# records hold only their question, and are no longer recalled for an unrelated one.
UNCHECKED_TURNS = (
    "- Q: What is the capital of France?",
    "- Q: What's the weather in Lisbon today?",
)


def test_the_replay_gives_the_answers_recorded(replayed: list[tuple[dict, dict]]) -> None:
    """The graph, given the same replies, still does what it did when they were recorded."""
    for record, payload in replayed:
        if record["id"] in SAVED_NOW:
            assert payload["tool_calls"] == [] and record["replies"][0].startswith("I'm sorry")
            assert payload["answer"] == SAVED_NOW[record["id"]], record["id"]
            continue
        recorded = "\n".join(
            line
            for line in record["answer"].split("\n")
            if line.strip() not in (SAVED_TWICE, SAVE_TURN, *UNCHECKED_TURNS)
        )
        assert payload["answer"] == recorded, record["id"]
        assert [c["tool"] for c in payload["tool_calls"]] == [
            c["tool"] for c in record["tool_calls"]
        ], record["id"]


def _tools_called(payload: dict[str, Any]) -> list[str]:
    return [c["tool"] for c in payload["tool_calls"]]


def test_personal_questions_recall_and_remember_saves(replayed: list[tuple[dict, dict]]) -> None:
    by_id = {r["id"]: p for r, p in replayed}
    # "Remember that my dog's ...": saved as the turn began, not a second time by a tool
    assert _tools_called(by_id["q09"]) == []
    assert [s["content"] for s in by_id["q09"]["memory_saved"]] == ["The user's dog's name is Rex."]
    assert _tools_called(by_id["q10"])[:1] == ["recall_memory"]  # "What is my dog's name?"
    assert _tools_called(by_id["q11"])[:1] == ["recall_memory"]  # "What did I tell you ..."
    assert _tools_called(by_id["q01"]) == []  # "What is the capital of France?"
