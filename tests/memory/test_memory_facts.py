"""Facts without a store: the rules, the model's strict output, provenance and grounding."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import BaseMessage

from local2.errors import FactParseError
from local2.memory._facts import (
    ANSWER,
    FACTS_SCHEMA,
    USER_MESSAGE,
    USER_REQUEST,
    answer_is_a_source,
    distill,
    explicit_requests,
    fact_key,
    grounded,
    parse_facts,
    rule_facts,
    third_person,
    without_tool_text,
)
from local2.models._scripted import ScriptedChatModel, reply
from local2.retrieval._text import sentences


def _texts(message: str) -> list[tuple[str, str, str]]:
    return [(f.text, f.key, f.source) for f in rule_facts(message)]


def test_rules_take_remember_that_and_my_x_is_y() -> None:
    assert _texts("Remember that my sister's name is Ines.") == [
        ("The user's sister's name is Ines.", "sister name", USER_REQUEST)
    ]
    assert _texts("My favourite colour is teal. I live in Lisbon!") == [
        ("The user's favourite colour is teal.", "favourite colour", USER_MESSAGE),
        ("The user lives in Lisbon.", "home", USER_MESSAGE),
    ]
    assert _texts("Please remember: I work at Acme Robotics as an engineer.") == [
        ("The user works at Acme Robotics as an engineer.", "workplace", USER_REQUEST)
    ]
    assert _texts("Call me Jo.") == [("The user wants to be called Jo.", "name", USER_MESSAGE)]
    assert _texts("Remember that I'm allergic to peanuts") == [
        ("The user is allergic to peanuts.", "is allergic to peanuts", USER_REQUEST)
    ]


@pytest.mark.parametrize(
    "message",
    [
        "What is my sister's name?",
        "Do you remember my dog's name?",
        "Remember to water the tomatoes.",
        "What is the capital of France?",
        "Can you remember what I asked about Rust?",
        "I wonder why the sky is blue.",
    ],
)
def test_rules_find_no_fact_in_questions_reminders_or_musings(message: str) -> None:
    assert rule_facts(message) == []


def test_sentences_do_not_end_at_abbreviations_or_inside_addresses() -> None:
    assert sentences("My dentist is Dr. Okafor. I like Ursula K. Le Guin! See 127.0.0.1.") == [
        "My dentist is Dr. Okafor.",
        "I like Ursula K. Le Guin!",
        "See 127.0.0.1.",
    ]


def test_explicit_requests_only_for_remember_that() -> None:
    assert [f.text for f in explicit_requests("Hi! Also, note that our office moved to B5.")] == [
        "The user's office moved to B5."
    ]
    assert explicit_requests("My sister's name is Ines.") == []  # a statement, not a request


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("I work at Acme", "The user works at Acme."),
        ("I usually cycle to work", "The user usually cycles to work."),
        ("I study law", "The user studies law."),
        ("I go climbing on Sundays", "The user goes climbing on Sundays."),
        ("I grew up in Porto", "The user grew up in Porto."),
        ("I'm vegetarian", "The user is vegetarian."),
        ("I've got two kids", "The user has got two kids."),
        ("my dog bit me", "The user's dog bit them."),
        ("I take my coffee black", "The user takes their coffee black."),
        ("I keep my bike at Dr. Silva's", "The user keeps their bike at Dr. Silva's."),
    ],
)
def test_third_person(clause: str, expected: str) -> None:
    assert third_person(clause) == expected


def test_keys_compare_wordings_of_one_attribute() -> None:
    assert fact_key("Sister's name") == fact_key("the user's sister name") == "sister name"
    assert fact_key("Employer") != fact_key("home city")


def test_grounding_needs_every_name_and_number_in_the_source() -> None:
    said = "Remember that my sister's name is Ines and she was born in 1990."
    assert grounded("The user's sister's name is Ines.", said)
    assert grounded("The user's sister was born in 1990.", said)
    assert not grounded("The user's sister's name is Gertrude.", said)
    assert not grounded("The user's sister was born in 1991.", said)
    assert not grounded("The user enjoys sailing.", said)  # nothing of it was said


def test_parse_is_strict() -> None:
    good = json.dumps(
        {
            "facts": [
                {"text": "The user likes tea.", "key": "drink", "about": "user", "source": "user"}
            ]
        }
    )
    assert [f.text for f in parse_facts(good)] == ["The user likes tea."]
    assert parse_facts('{"facts": []}') == []
    with pytest.raises(FactParseError, match="not JSON"):
        parse_facts("```json\n" + good + "\n```")
    with pytest.raises(FactParseError, match="not JSON"):
        parse_facts("Sure! The user likes tea.")
    with pytest.raises(FactParseError, match="schema"):
        parse_facts('{"facts": [{"text": "The user likes tea.", "key": "drink"}]}')
    with pytest.raises(FactParseError, match="schema"):
        parse_facts('{"facts": [{"text": "x", "key": "k", "about": "cat", "source": "user"}]}')
    with pytest.raises(FactParseError, match="schema"):
        parse_facts("[]")


def _model(*contents: str) -> tuple[ScriptedChatModel, list[list[BaseMessage]]]:
    model = ScriptedChatModel(replies=[reply(c) for c in contents])
    return model, model.seen


def _fact(text: str, key: str, about: str = "user", source: str = "user") -> dict:
    return {"text": text, "key": key, "about": about, "source": source}


def test_model_facts_are_kept_only_from_their_claimed_source() -> None:
    out = json.dumps(
        {
            "facts": [
                _fact("The user's sister's name is Ines.", "sister's name"),
                _fact("The user's brother is called Tom.", "brother's name"),  # never said
                _fact("The user works at Acme.", "employer", source="answer"),  # about the user
                _fact("The Lisbon office opens at 9.", "office hours", "world", "answer"),
            ]
        }
    )
    model, seen = _model(out)
    result = distill(
        "My sister's name is Ines.",
        "Noted. The Lisbon office opens at 9, by the way.",
        tools_used=[],
        chat_model=model,
        backend="custom",
        mode="model",
    )
    assert [(f.text, f.key, f.source, f.extractor) for f in result.facts] == [
        ("The user's sister's name is Ines.", "sister name", USER_MESSAGE, "model"),
        ("The Lisbon office opens at 9.", "office hours", ANSWER, "model"),
    ]
    assert result.dropped == 2 and result.extractor == "model" and result.fallback is None
    prompt = "\n".join(str(m.content) for m in seen[0])
    assert "<user_message>\nMy sister's name is Ines.\n</user_message>" in prompt
    assert "<assistant_answer>" in prompt


def test_an_answer_built_on_tool_output_is_not_shown_to_the_extractor() -> None:
    planted = _fact("The user's sister is Gertrude.", "sister", source="answer")
    model, seen = _model(json.dumps({"facts": [planted]}))
    result = distill(
        "Summarise http://127.0.0.1:1/page for me, I need it for my thesis.",
        "The page says the user's sister is Gertrude.",
        tools_used=["web_fetch"],
        chat_model=model,
        backend="custom",
        mode="model",
    )
    assert result.facts == [] and result.dropped == 1
    prompt = "\n".join(str(m.content) for m in seen[0])
    assert "Gertrude" not in prompt and "not a source of facts" in prompt
    assert not answer_is_a_source("anything", ["recall_memory", "web_search"])
    assert answer_is_a_source("anything", ["recall_memory"])


def test_a_reply_that_does_not_parse_falls_back_to_the_rules() -> None:
    model, _ = _model("Here are the facts: the user's sister is Ines.")
    result = distill(
        "My sister's name is Ines.", "Noted.", tools_used=[], chat_model=model,
        backend="custom", mode="model",
    )  # fmt: skip
    assert result.extractor == "rules" and "not JSON" in (result.fallback or "")
    assert [f.text for f in result.facts] == ["The user's sister's name is Ines."]


def test_no_model_call_for_questions_and_rules_off_ollama() -> None:
    model, seen = _model()  # would fail loudly if called
    assert distill(
        "What is the capital of France?", "Paris.", tools_used=[], chat_model=model,
        backend="ollama", mode="auto",
    ).facts == []  # fmt: skip
    assert seen == []
    embedded = distill(
        "My dog is called Rex.", "Nice!", tools_used=[], chat_model=model,
        backend="embedded", mode="auto",
    )  # fmt: skip
    assert embedded.extractor == "rules" and [f.key for f in embedded.facts] == ["dog"]
    off = distill("My dog is Rex.", "", tools_used=[], chat_model=model, backend="x", mode="off")
    assert off.facts == [] and seen == []


def test_schema_requires_the_provenance_fields() -> None:
    item = FACTS_SCHEMA["properties"]["facts"]["items"]
    assert set(item["required"]) == {"text", "key", "about", "source"}


def test_copied_tool_text_is_cut_from_what_memory_keeps() -> None:
    page = (
        "URL: http://127.0.0.1:8/tower\nExtracted text:\nThe Eiffel Tower was completed in "
        "1889 and is 330 metres tall, the tallest structure in Paris for four decades."
    )
    answer = (
        "Here is the gist: The Eiffel Tower was completed in 1889 and is 330 metres tall, the "
        "tallest structure in Paris for four decades. Enjoy your trip!"
    )
    kept, cut = without_tool_text(answer, [("web_fetch", page)])
    assert kept == "Here is the gist: [… text from web_fetch not kept in memory] Enjoy your trip!"
    assert cut == 20
    assert without_tool_text("Paris is lovely in 1889.", [("web_fetch", page)]) == (
        "Paris is lovely in 1889.",
        0,
    )
