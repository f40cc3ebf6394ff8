"""The keyword router: URL -> web_fetch, time words -> web_search, memory cues -> recall."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from local2.tools._base import Tool
from local2.tools._files import SEARCH_FILES_CUE
from local2.tools._memory_tools import RECALL_CUE, SAVE_CUE
from local2.tools._routing import route
from local2.tools._web import FETCH_CUE, SEARCH_CUE

ALL = ("web_search", "web_fetch", "recall_memory", "save_memory")
CUES = {
    "web_search": SEARCH_CUE,
    "web_fetch": FETCH_CUE,
    "recall_memory": RECALL_CUE,
    "save_memory": SAVE_CUE,
    "search_files": SEARCH_FILES_CUE,
}


def tools(names: tuple[str, ...]) -> list[Tool]:
    """The named tools, each carrying its own cue as the tools folder defines it."""
    return [Tool(n, "", {}, lambda args, ctx: "", cue=CUES.get(n)) for n in names]


TODAY = dt.date(2026, 3, 14)


def _routed(query: str, names: tuple[str, ...] = ALL) -> list[tuple[str, dict]]:
    return [(c["name"], c["args"]) for c in route(query, tools(names), today=TODAY)]


@pytest.mark.parametrize(
    ("query", "url"),
    [
        ("Summarize https://example.com/post/42", "https://example.com/post/42"),
        ("What does http://info.cern.ch say?", "http://info.cern.ch"),
        ("Read (https://en.wikipedia.org/wiki/Okapi).", "https://en.wikipedia.org/wiki/Okapi"),
        ("Is <https://a.example/x?y=1&z=2> safe?", "https://a.example/x?y=1&z=2"),
        (
            "Compare https://a.example/one and https://b.example/two, please",
            "https://a.example/one",
        ),
    ],
)
def test_a_url_is_fetched(query: str, url: str) -> None:
    assert _routed(query) == [("web_fetch", {"url": url})]


@pytest.mark.parametrize(
    "query",
    [
        "What's the latest news about the Mars sample return mission?",
        "What is the price of bitcoin?",
        "Who is the current prime minister of Japan?",
        "What happened in the stock market today?",
        "Any news on the Artemis launch?",
        "Who won the match yesterday?",
        "What is the weather in Oslo right now?",
        "Recent advances in battery chemistry",
        "Who won the Nobel Prize in Physics in 2026?",
        "What were the biggest tech layoffs of 2025?",
        "Which phones came out this week?",
        "Is the bridge open now?",
        "How much does a Tesla Model 3 cost currently?",
    ],
)
def test_time_sensitive_questions_search_the_web(query: str) -> None:
    assert _routed(query) == [("web_search", {"query": query})]


@pytest.mark.parametrize(
    "query",
    [
        "Do you remember my dog's name?",
        "What did I say about my trip to Lisbon?",
        "Did I tell you where I work?",
        "What did we discuss earlier about the budget?",
        "Last time we talked about sourdough, what did you recommend?",
        "Can you remember what I asked you about Rust?",
        "Have I mentioned my sister before?",
        "What was the book you recommended earlier?",
        "What did I say last week about my knee?",  # memory cue wins over "last week"
    ],
)
def test_questions_about_earlier_conversations_recall_memory(query: str) -> None:
    assert _routed(query) == [("recall_memory", {"query": query})]


@pytest.mark.parametrize(
    "query",
    [
        "What is the capital of France?",
        "Explain how photosynthesis works.",
        "Write a haiku about autumn.",
        "What is 17 times 23?",
        "Who wrote Pride and Prejudice?",
        "How do I reverse a list in Python?",
        "What is now known as Istanbul?",
        "What is the electric current through a 10 ohm resistor at 5 V?",
        "What is price elasticity of demand?",
        "Who won the 2018 World Cup?",
        "When was the last time Halley's comet was visible?",
        "How can I remember the order of the planets?",
        "Which came earlier, the Roman Empire or the Han dynasty?",
        "What is the most recent common ancestor of humans and chimpanzees?",
        "Translate 'good morning' into Spanish.",
        "Why is the sky blue?",
        "Summarize the plot of Hamlet.",
        "Define entropy in thermodynamics.",
        "What does HTTP stand for?",
        "Give me a recipe for pancakes.",
        "",
        "   ",
    ],
)
def test_ordinary_questions_route_nowhere(query: str) -> None:
    assert _routed(query) == []


def test_only_tools_that_exist_are_routed() -> None:
    assert _routed("Read https://a.example/x", ("web_search",)) == []
    assert _routed("Latest news on Ariane 6?", ("web_fetch", "recall_memory")) == []
    assert _routed("Do you remember my name?", ("web_search",)) == []
    assert _routed("Latest news on Ariane 6?", {"web_search"}) == [
        ("web_search", {"query": "Latest news on Ariane 6?"})
    ]


def test_url_and_memory_cue_give_one_call_each_and_no_search() -> None:
    query = "Do you remember https://a.example/x? Is there news today on https://b.example/y?"
    assert _routed(query) == [
        ("web_fetch", {"url": "https://a.example/x"}),
        ("recall_memory", {"query": query}),
    ]


def test_call_shape_matches_the_parser() -> None:
    calls = route("Latest news?", tools(ALL), today=TODAY)
    assert len(calls) == 1
    assert set(calls[0]) == {"name", "args", "id"}
    assert re.fullmatch(r"call_[0-9a-f]{8}", calls[0]["id"])


def test_years_count_relative_to_today() -> None:
    q = "Who won the 2025 Tour de France?"
    assert route(q, tools(ALL), today=dt.date(2026, 1, 5))  # last year: past most cut-offs
    assert route(q, tools(ALL), today=dt.date(2030, 1, 5)) == []


@pytest.mark.parametrize(
    "query",
    ["What does my notes file say about the budget?", "Search my documents for the lease terms"],
)
def test_questions_about_own_files_search_them(query: str) -> None:
    calls = route(query, tools(("search_files", "web_search", "read_file")))
    assert [c["name"] for c in calls] == ["search_files"]
    assert calls[0]["args"] == {"query": query}


def test_own_files_cue_needs_the_tool_and_the_possessive() -> None:
    assert route("What does my notes file say?", tools(("web_search",))) == []
    assert route("How do I take better notes?", tools(("search_files",))) == []
