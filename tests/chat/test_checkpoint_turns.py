"""A session's checkpoints grouped by turn (``agent.sessions.checkpoint_turns``), on the real SQLite
checkpointer: what time travel offers a person to pick from.

Each turn carries its own question and the answer that belongs to it, never the previous
turn's (which a turn's first checkpoints still hold beside the new question)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from tests.chat.helpers import Notes
from tests.chat.helpers import make_agent as approval_agent
from tests.kit.helpers import make_settings

QUESTIONS = [
    "What is the capital of France?",
    "What river flows through it?",
    "How long is that river?",
    "Name a bridge over it.",
]


def echo(messages: list[BaseMessage]) -> AIMessage:
    asked = str(messages[-1].content)
    if asked == "boom":
        raise RuntimeError("the model fell over")
    return AIMessage(f"you said: {asked}")


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    model = ScriptedChatModel(replies=[echo], repeat_last=True)
    made = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    for question in QUESTIONS:
        made.turns.ask(question, "s1")
    yield made
    made.close()


def test_four_turns_are_four_groups_each_with_its_own_question_and_answer(agent: Agent) -> None:
    rows = agent.sessions.checkpoints("s1", limit=1000)
    turns = agent.sessions.checkpoint_turns("s1")
    assert [t["number"] for t in turns] == [1, 2, 3, 4]
    assert [t["question"] for t in turns] == QUESTIONS
    assert [t["answer"] for t in turns] == [f"you said: {q}" for q in QUESTIONS]
    assert all(t["status"] == "answered" and t["current"] for t in turns)
    assert not any(t["abandoned"] or t["replay"] or t["rerun_of"] for t in turns)
    # Every checkpoint is in exactly one turn.
    grouped = [c for t in turns for c in t["checkpoints"]]
    assert sorted(grouped) == sorted(r["checkpoint_id"] for r in rows)
    assert len(rows) > 4 * 4  # the picker used to offer each of these
    # The query ids are the turns' own, as the history logged them.
    assert [t["query_id"] for t in turns] == [h["query_id"] for h in agent.sessions.history("s1")]


def test_a_turns_first_checkpoints_hold_the_last_answer_but_the_turn_does_not(
    agent: Agent,
) -> None:
    """What misled the Original branch pane: the checkpoint where turn 2's question is set
    still holds turn 1's answer."""
    second = agent.sessions.checkpoint_turns("s1")[1]
    rows = {r["checkpoint_id"]: r for r in agent.sessions.checkpoints("s1", limit=1000)}
    before_receive = next(c for c in second["checkpoints"] if rows[c]["next"] == ["receive"])
    state = agent.sessions.state("s1", before_receive)
    assert state["query"] == QUESTIONS[1] and state["answer"] == f"you said: {QUESTIONS[0]}"
    assert second["answer"] == f"you said: {QUESTIONS[1]}"


def test_forking_a_question_is_a_new_turn_of_the_same_number_on_the_current_branch(
    agent: Agent,
) -> None:
    original = agent.sessions.checkpoint_turns("s1")[1]
    payload = agent.timetravel.replay(
        "s1", original["fork_from"], query="What sea does it flow into?"
    )
    assert payload["answer"] == "you said: What sea does it flow into?"
    assert payload["original"] and payload["original"]["query"] == QUESTIONS[1]
    # From just before turn 2: the history keeps turn 1 and then the edited question.
    assert [h["user"] for h in agent.sessions.history("s1")] == [
        QUESTIONS[0],
        "What sea does it flow into?",
    ]

    turns = agent.sessions.checkpoint_turns("s1")
    assert [(t["number"], t["question"]) for t in turns] == [
        (1, QUESTIONS[0]),
        (2, QUESTIONS[1]),
        (2, "What sea does it flow into?"),
        (3, QUESTIONS[2]),
        (4, QUESTIONS[3]),
    ]
    fork = turns[2]
    assert fork["rerun_of"] == original["turn_id"] and not fork["replay"]
    assert fork["answer"] == "you said: What sea does it flow into?"
    assert set(payload["branch"]) <= set(fork["checkpoints"])
    assert [t["current"] for t in turns] == [True, False, True, False, False]
    assert turns[1]["answer"] == f"you said: {QUESTIONS[1]}"  # the original, as it was


def test_the_first_turn_forks_from_its_very_first_checkpoint(agent: Agent) -> None:
    first = agent.sessions.checkpoint_turns("s1")[0]
    agent.timetravel.replay("s1", first["fork_from"], query="What is the capital of Italy?")
    assert [h["user"] for h in agent.sessions.history("s1")] == ["What is the capital of Italy?"]
    turns = agent.sessions.checkpoint_turns("s1")
    assert [t["number"] for t in turns][:2] == [1, 1]
    assert turns[1]["rerun_of"] == first["turn_id"] and turns[1]["current"]


def test_replaying_a_turn_is_its_own_entry_with_its_own_answer(agent: Agent) -> None:
    third = agent.sessions.checkpoint_turns("s1")[2]
    assert third["replay_from"] in third["checkpoints"]
    payload = agent.timetravel.replay("s1", third["replay_from"])
    assert payload["query"] == QUESTIONS[2]
    assert payload["events"][0] == "replay.started"  # on its own clock, the model asked again
    turns = agent.sessions.checkpoint_turns("s1")
    replayed = next(t for t in turns if t["replay"])
    assert replayed["number"] == 3 and replayed["rerun_of"] == third["turn_id"]
    assert replayed["question"] == QUESTIONS[2] and replayed["answer"] == payload["answer"]
    assert replayed["current"] and set(payload["branch"]) <= set(replayed["checkpoints"])
    assert [t["number"] for t in turns] == [1, 2, 3, 3, 4]
    original = next(t for t in turns if t["turn_id"] == third["turn_id"])
    assert not original["current"]  # the session now continues from the replay


def test_a_turn_that_failed_is_stopped_without_an_answer(agent: Agent) -> None:
    with pytest.raises(Exception, match="fell over"):
        agent.turns.ask("boom", "s1")
    agent.turns.ask("After the failure?", "s1")
    turns = agent.sessions.checkpoint_turns("s1")
    failed = next(t for t in turns if t["question"] == "boom")
    assert failed["number"] == 5 and failed["answer"] is None
    assert failed["status"] == "unfinished" and failed["abandoned"] and not failed["current"]
    after = turns[-1]
    assert after["question"] == "After the failure?" and after["number"] == 5
    assert after["answer"] == "you said: After the failure?" and after["current"]


def test_a_turn_waiting_for_approval_says_so(tmp_path: Path) -> None:
    agent = approval_agent(tmp_path, Notes())
    try:
        assert (
            agent.turns.ask("Summarise https://a.example/", "s1")["status"] == "awaiting_approval"
        )
        [turn] = agent.sessions.checkpoint_turns("s1")
        assert turn["status"] == "awaiting_approval" and turn["answer"] is None
        assert turn["current"] and not turn["abandoned"]
        agent.approvals.decide("s1", True)
        [turn] = agent.sessions.checkpoint_turns("s1")
        assert turn["status"] == "answered" and turn["answer"] == "The bridge opened in 1932."
    finally:
        agent.close()
