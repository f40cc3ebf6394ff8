"""Memory, critic and ratings through whole turns: real graph, real Chroma, Ollama protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2_testkit.brain_memory import split_memory
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2, make_settings
from tests.memory.helpers import ollama_agent

FACTS = json.loads((Path(__file__).parents[1] / "fixtures" / "planted_facts.json").read_text())


def test_a_fact_told_in_one_session_is_recalled_in_another(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        told = agent.turns.ask("My favourite colour is teal.", "first")
        assert "memory.ingested" in told["events"]
        asked = agent.turns.ask("What did I tell you about my favourite colour?", "second")
        assert [c["tool"] for c in asked["tool_calls"]] == ["recall_memory"]
        assert "memory.recall" in asked["events"]
        hit = next(h for h in asked["memory_hits"] if "teal" in h["content"])
        assert 0 < hit["similarity"] <= 1 and hit["age_s"] >= 0 and hit["kind"] == "episodic"
        assert "teal" in asked["answer"].lower()
        # nomic-embed-text's asymmetric prefixes reached the embedding server.
        inputs = [i for body in server.embed_requests for i in body.get("input", [])]
        assert any(i.startswith("search_document: ") for i in inputs)
        assert any(i.startswith("search_query: ") for i in inputs)


def test_critique_grades_each_turn_and_ratings_reach_the_engram(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        payload = agent.turns.ask("What is the capital of France?", "s1")
        critique = payload["critique"]
        assert critique["score"] in (1, 2, 3, 4, 5) and critique["feedback"]
        assert "critique.result" in payload["events"]
        engram = next(e for e in agent.services.memory.list() if "Paris" in e["content"])
        assert engram["critic_score"] == critique["score"]

        result = agent.ratings.feedback("s1", payload["query_id"], 5, "spot on")
        assert [e["subject"] for e in result["events"]] == ["user.feedback", "reward.event"]
        assert result["engrams_annotated"] == 1
        engram = agent.services.memory.get(engram["id"])
        assert engram["reward"] == 5
        with pytest.raises(LookupError, match="No turn"):
            agent.ratings.feedback("s1", "not-a-turn", 3)
        agent.close()

        # The rating survives a restart, in the session's state and its event log.
        again = ollama_agent(tmp_path, server.url)
        state = again.sessions.state("s1")
        assert state["rewards"][payload["query_id"]]["rating"] == 5
        assert [e["subject"] for e in state["event_log"]][-2:] == ["user.feedback", "reward.event"]
        assert again.sessions.history("s1")[0]["reward"]["rating"] == 5


@pytest.mark.parametrize("rated_with", ["memory open", "memory not open"])
def test_ratings_change_recall_order(tmp_path: Path, rated_with: str) -> None:
    """Rated where memory is open (the app), or where it is not (`local2 feedback`): then
    the annotation waits, and the open store applies it before its next recall."""
    settings = make_settings(tmp_path, memory={"embedder": "lexical"})
    model = ScriptedChatModel(replies=[reply("Noted.")], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], critic=None)
    first = agent.turns.ask("The harbour ferry leaves at 7 on weekdays.", "a")
    second = agent.turns.ask("The harbour ferry leaves at 9 on weekends.", "b")
    store = agent.services.memory
    query = "When does the harbour ferry leave?"
    before = [h["content"] for h in store.recall(query, k=2)]
    low, high = (first, second) if "7 on weekdays" in before[0] else (second, first)
    rater = agent
    if rated_with == "memory not open":
        rater = Agent(settings, chat_model=model, tools=[], critic=None, memory=None)
    given = [
        rater.ratings.feedback(high["session_id"], high["query_id"], 5),
        rater.ratings.feedback(low["session_id"], low["query_id"], 1),
    ]
    counts = [1, 1] if rater is agent else [None, None]  # None: waits for memory
    assert [g["engrams_annotated"] for g in given] == counts
    after = store.recall(query, k=2, include_bad=True)
    assert high["query"] in after[0]["content"], "a well-rated engram should rank first"
    assert [h["content"] for h in store.recall(query, k=2)] == [after[0]["content"]], (
        "an engram rated bad is left out of recall by default"
    )


def _recall_then_answer(messages: list[BaseMessage]) -> AIMessage:
    """A model that recalls for every question, then answers with what recall returned."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return reply(str(last.content))
    asked = next(m for m in reversed(messages) if isinstance(m, HumanMessage)).content
    question = split_memory(str(asked))[2]  # the question, not the memories recalled with it
    return reply("", tool_calls=[{"name": "recall_memory", "args": {"query": question, "k": 3}}])


@pytest.mark.slow
def test_planted_facts_are_recalled_through_real_turns(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "minilm"})
    teller = ScriptedChatModel(replies=[reply("Noted.")], repeat_last=True)
    agent = Agent(settings, chat_model=teller, tools=[], critic=None)
    for i, item in enumerate(FACTS["facts"][:30]):
        agent.turns.ask(item["fact"], f"tell-{i}")
    asker = Agent(
        settings,
        chat_model=ScriptedChatModel(replies=[_recall_then_answer], repeat_last=True),
        memory=agent.services.memory,
        critic=None,
        checkpointer=agent.checkpointer,
    )
    found = 0
    for i, item in enumerate(FACTS["facts"][:30]):
        payload = asker.turns.ask(item["question"], f"ask-{i}")
        # The turn's hits: first those recalled before answering, then the tool's top 3.
        auto = next(e["hits"] for e in payload["event_log"] if e.get("auto"))
        top3 = [h["content"] for h in payload["memory_hits"][auto : auto + 3]]
        found += any(item["answer"] in content for content in top3)
    recall_at_3 = found / 30
    print(f"planted facts through turns: recall@3 = {recall_at_3:.3f} (30 facts, MiniLM)")
    assert recall_at_3 >= 0.85


def test_ask_json_has_a_critique_and_feedback_shows_in_memory_list(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}

        asked = local2(
            "ask", "What is the capital of France?", "--json", "--backend", "ollama", env=env
        )
        assert asked.returncode == 0, asked.stderr
        payload = json.loads(asked.stdout)
        assert payload["critique"]["score"] is not None and payload["critique"]["feedback"]
        rated = local2(
            "feedback", payload["session_id"], payload["query_id"], "--rating", "4", env=env
        )
        assert rated.returncode == 0, rated.stderr
        listed = local2("memory", "list", "--json", env=env)
        assert listed.returncode == 0, listed.stderr
        engrams = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
        mine = next(e for e in engrams if "Paris" in e["content"])
        assert mine["reward"] == 4


def search_embeds(server: FakeOllama) -> int:
    """How many questions were embedded for a memory search."""
    inputs = [i for body in server.embed_requests for i in body.get("input", [])]
    return sum(i.startswith("search_query: ") for i in inputs)


def test_the_recall_started_ahead_is_the_turns_recall(tmp_path: Path) -> None:
    """The agent starts the question's memory search before the graph runs; the turn takes
    that search (nothing embedded twice) and its hits are those the node would find."""
    from concurrent.futures import Future, ThreadPoolExecutor

    from local2.graph._turn import RecallAhead, TurnContext, recall_ahead

    question = "What did I tell you about my favourite colour?"
    with FakeOllama(RuleBrain()) as server, ThreadPoolExecutor(1) as pool:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": server.url},
            generator={"backend": "ollama"},
            # Every engram is similar enough to be recalled: the hash embeddings are crude.
            memory={"embedder": "ollama", "auto_recall_min_similarity": -1.0},
            web={"search": {"provider": "mock"}},
        )
        agent = Agent(settings, backend="ollama")
        agent.turns.ask("My favourite colour is teal.", "first")
        agent.turns.wait_idle(30)

        ahead = recall_ahead(agent.services, f"  {question} ", pool.submit)
        assert ahead is not None and ahead.query == question
        found = ahead.hits.result()
        assert any("teal" in h["content"] for h in found)
        before = search_embeds(server)
        asked = agent.turns.ask(question, "second")  # the agent's own search ahead: one embedding
        assert search_embeds(server) == before + 1
        auto = next(e for e in asked["event_log"] if e["subject"] == "memory.recall")
        assert auto["ids"] == [h["id"] for h in found]

        # The node takes a search started ahead for its question, and only for it.
        planted: Future = Future()
        planted.set_result([{**found[0], "content": "planted ahead"}])
        for asked_ahead, expected in ((question, ["planted ahead"]), ("Another question?", [])):
            config = {"configurable": {"thread_id": f"direct-{len(expected)}"}}
            context = TurnContext(agent.services, recall_ahead=RecallAhead(asked_ahead, planted))
            before = search_embeds(server)
            state = agent.graph.invoke({"query": question}, config, context=context)
            contents = [h["content"] for h in state["memory_hits"]]
            if expected:
                assert contents == expected and search_embeds(server) == before
            else:
                assert "planted ahead" not in contents and search_embeds(server) == before + 1

        # "Remember that ..." is saved first, so its search cannot start ahead.
        assert recall_ahead(agent.services, "Remember that my sister is Ines.", pool.submit) is None
        agent.close()
