"""Two respondents in one turn, the judge's comparison, the person's preference, the arena and
the low-score retry - against the Ollama-protocol test server with two models that answer
differently (``qwen3:4b`` knows, ``hedge:1b`` says it does not), through the real
``ChatOllama`` client, real SQLite checkpoints, real Chroma memory and the real critic.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2 import events
from local2.config import load_settings
from local2.errors import CannotRetry
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2_testkit.brains import HedgingBrain, ModelBrains, Reply
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2, meet

STRONG, WEAK = "qwen3:4b", "hedge:1b"
MODELS = [STRONG, WEAK, "rules:2b", "broken:1b", "nomic-embed-text"]
CAPITAL = "What is the capital of France?"
NEWS = "What major AI news broke this week?"


class Recording:
    """A brain per model that also records when each request arrived."""

    def __init__(self, brains: dict[str, Any]) -> None:
        self.inner = ModelBrains(brains)
        self.spans: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        start = time.monotonic()
        result = self.inner(request)
        with self.lock:
            self.spans.append((str(request.get("model")), start, time.monotonic()))
        return result


def two_models(**kw: Any) -> FakeOllama:
    brains = {
        STRONG: RuleBrain(),
        WEAK: HedgingBrain(),
        "rules:2b": RuleBrain(),
        "broken:1b": lambda request: Reply(error="model crashed", status=500),
    }
    return FakeOllama(Recording(brains), models=MODELS, **kw)


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with two_models() as fake:
        yield fake


def make_agent(tmp_path: Path, url: str, model: str = STRONG) -> Agent:
    settings = load_settings(
        overrides={
            "system": {"ollama_host": url, "data_dir": str(tmp_path / "data")},
            "generator": {"backend": "ollama", "model": model},
            "web": {"search": {"provider": "mock"}},
        }
    )
    return Agent(settings, backend="ollama", model=model)


def generation_requests(server: FakeOllama, model: str) -> list[dict[str, Any]]:
    """The answering requests a model got (not the judge's, nor fact extraction's)."""
    return [
        r
        for r in server.chat_requests
        if r.get("model") == model
        and not r.get("format")  # a JSON schema: memory's fact extraction
        and not any("###Task Description" in str(m.get("content")) for m in r["messages"])
    ]


def test_ask_model_b_json_then_prefer_b_continues_with_b_and_counts_in_the_arena(
    server: FakeOllama, tmp_path: Path
) -> None:
    env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
    asked = local2(
        "ask",
        CAPITAL,
        "--model-b",
        WEAK,
        "--json",
        "--backend",
        "ollama",
        "--model",
        STRONG,
        env=env,
    )
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    a, b = payload["respondents"]["a"], payload["respondents"]["b"]
    assert (a["model"], b["model"]) == (STRONG, WEAK)
    assert "Paris" in a["answer"] and "I don't know" in b["answer"]
    assert a["thinking"] and b["thinking"] and a["thinking"] != b["thinking"]
    # The turn's answer is A's until the person prefers B.
    assert payload["answer"] == a["answer"] and a["continues_history"]
    # Every event names its respondent: a, b, or null for the turn's shared ones.
    assert all("respondent_id" in e for e in payload["event_log"])
    by_subject: dict[str, list[Any]] = {}
    for e in payload["event_log"]:
        by_subject.setdefault(e["subject"], []).append(e["respondent_id"])
    assert sorted(by_subject[events.RESPONSE_GENERATION]) == ["a", "b"]
    assert sorted(by_subject[events.CRITIQUE_RESULT]) == ["a", "b"]
    assert by_subject[events.PAIRWISE_RESULT] == [None]
    assert by_subject[events.QUERY_RECEIVED] == [None]
    # Graded absolutely, then compared in both orders: both say A.
    assert payload["pairwise"]["scores"] == {"a": 4, "b": 1}
    assert payload["pairwise"]["verdicts"] == {"a_first": "a", "b_first": "a"}
    assert payload["pairwise"]["winner"] == "a"
    result = next(e for e in payload["event_log"] if e["subject"] == events.PAIRWISE_RESULT)
    assert result["winner"] == "a" and result["query_id"] == payload["query_id"]

    session_id, query_id = payload["session_id"], payload["query_id"]
    preferred = local2("feedback", session_id, query_id, "--prefer", "b", env=env)
    assert preferred.returncode == 0, preferred.stderr
    assert "continues from B" in preferred.stdout

    follow = local2(
        "ask",
        "Tell me about the Python GIL.",
        "--session",
        session_id,
        "--backend",
        "ollama",
        "--model",
        STRONG,
        env=env,
    )
    assert follow.returncode == 0, follow.stderr
    seen = generation_requests(server, STRONG)[-1]["messages"]
    said = [m["content"] for m in seen if m["role"] == "assistant"]
    assert said == [b["answer"]]  # the history holds B's answer, not A's

    arena = local2("arena", "--json", env=env)
    assert arena.returncode == 0, arena.stderr
    table = json.loads(arena.stdout)
    assert [r["model"] for r in table["people"]] == [WEAK, STRONG]
    assert [r["model"] for r in table["judge"]] == [STRONG, WEAK]
    assert table["votes"] == {"people": 1, "judge": 1}
    printed = local2("arena", env=env)
    assert "People's votes" in printed.stdout and WEAK in printed.stdout


class Rendezvous(Recording):
    """Holds each model's first request until the other model's first request arrives.

    Run in parallel, both arrive and meet; one after the other, the first waits alone and
    the barrier breaks after ``wait_s`` (nothing here depends on how fast the machine is).
    """

    def __init__(self, brains: dict[str, Any], models: tuple[str, ...], wait_s: float) -> None:
        super().__init__(brains)
        self.models = set(models)
        self.barrier = threading.Barrier(len(models))
        self.wait_s = wait_s
        self.met: dict[str, bool] = {}

    def __call__(self, request: dict[str, Any]) -> Any:
        model = str(request.get("model"))
        with self.lock:
            first = model in self.models and model not in self.met
            if first:
                self.met[model] = False
        if first:
            self.met[model] = meet(self.barrier, self.wait_s)
        return super().__call__(request)


def test_respondents_run_concurrently_each_with_its_own_tools(tmp_path: Path) -> None:
    brain = Rendezvous(
        {STRONG: RuleBrain(), "rules:2b": RuleBrain()}, models=(STRONG, "rules:2b"), wait_s=10
    )
    with FakeOllama(brain, models=MODELS) as server:
        agent = make_agent(tmp_path, server.url)
        items: list[tuple[str, Any]] = []
        payload = agent.turns.ask(
            NEWS,
            "s1",
            on_item=lambda kind, data: items.append((kind, data)),
            options=agent.turns.options("rules:2b"),
        )
        agent.close()
    # Each respondent's first request waited for the other's: they were in flight together.
    assert brain.met == {STRONG: True, "rules:2b": True}
    for rid in ("a", "b"):
        own = payload["respondents"][rid]
        assert [c["tool"] for c in own["tool_calls"]] == ["web_search"]
        requests = [e for e in payload["event_log"] if e["subject"] == "tool.request.web_search"]
        assert rid in {e["respondent_id"] for e in requests}
    streamed = {data["id"] for kind, data in items if kind == "respondent"}
    assert streamed == {"a", "b"}


def test_equally_good_answers_and_a_position_biased_judge_make_a_tie(
    server: FakeOllama, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, server.url)
    payload = agent.turns.ask(CAPITAL, "s1", options=agent.turns.options("rules:2b"))
    # RuleBrain picks Response A between equals: each order names a different respondent.
    assert payload["pairwise"]["verdicts"] == {"a_first": "a", "b_first": "b"}
    assert payload["pairwise"]["winner"] == "tie"
    assert [v.winner for v in agent.votes.all("judge")] == ["tie"]
    agent.close()


@pytest.mark.parametrize("preferred_with", ["memory open", "memory not open"])
def test_engrams_carry_respondent_and_pairwise_winner(
    server: FakeOllama, tmp_path: Path, preferred_with: str
) -> None:
    agent = make_agent(tmp_path, server.url)
    payload = agent.turns.ask(CAPITAL, "s1", options=agent.turns.options(WEAK))
    store = agent.services.memory
    rows = {r["respondent_id"]: r for r in store.list() if r.get("query_id") == payload["query_id"]}
    assert set(rows) == {"a", "b"}
    assert {r["pairwise_winner"] for r in rows.values()} == {"a"}  # the judge's, so far
    assert (rows["a"]["critic_score"], rows["b"]["critic_score"]) == (4, 1)
    chooser = agent
    if preferred_with == "memory not open":  # as `local2 feedback --prefer`: marks wait
        chooser = Agent(agent.settings, chat_model=ScriptedChatModel(), tools=[], memory=None)
    chosen = chooser.ratings.prefer("s1", payload["query_id"], "b")
    assert chosen["engrams_annotated"] == (2 if chooser is agent else None)
    rows = {r["respondent_id"]: r for r in store.list() if r.get("query_id") == payload["query_id"]}
    assert {(r["pairwise_winner"], r["pairwise_by"]) for r in rows.values()} == {("b", "person")}
    agent.close()


def test_a_respondent_whose_model_fails_leaves_the_other_answer(
    server: FakeOllama, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, server.url)
    payload = agent.turns.ask(CAPITAL, "s1", options=agent.turns.options("broken:1b"))
    assert "Paris" in payload["answer"]
    assert payload["respondents"]["b"]["answer"] == ""
    assert "model crashed" in payload["respondents"]["b"]["error"]
    assert payload["pairwise"]["winner"] is None
    assert agent.votes.all() == []  # no verdict, no vote
    assert agent.sessions.history("s1")[-1]["assistant"] == payload["answer"]
    agent.close()


def test_a_second_model_that_is_not_pulled_is_named_with_the_fix(tmp_path: Path) -> None:
    with two_models() as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
        result = local2(
            "ask", "hi", "--model-b", "nope:7b", "--backend", "ollama", "--model", STRONG, env=env
        )
        bad = local2(
            "ask", "hi", "--temperature-b", "9", "--backend", "ollama", "--model", STRONG, env=env
        )
    assert result.returncode != 0
    assert "ollama pull nope:7b" in result.stderr
    assert bad.returncode != 0 and "temperature" in bad.stderr.lower()


def test_a_preference_after_later_turns_is_recorded_without_rewriting_history(
    server: FakeOllama, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, server.url)
    first = agent.turns.ask(CAPITAL, "s1", options=agent.turns.options(WEAK))
    agent.turns.ask("Tell me about the Python GIL.", "s1")
    result = agent.ratings.prefer("s1", first["query_id"], "b")
    assert result["continues_history"] is False
    assert agent.sessions.history("s1")[0]["assistant"] == first["answer"]  # A's, still
    assert [v.winner for v in agent.votes.all("person")] == ["b"]
    with pytest.raises(LookupError, match="not a comparison"):
        agent.ratings.prefer("s1", agent.sessions.history("s1")[-1]["query_id"], "a")
    agent.close()


def test_a_grade_of_one_offers_the_retry_which_is_graded_again_and_switchable(
    tmp_path: Path,
) -> None:
    with FakeOllama(HedgingBrain(), models=[STRONG, "nomic-embed-text"]) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(tmp_path / "home")}
        asked = local2("ask", CAPITAL, "--json", "--backend", "ollama", "--model", STRONG, env=env)
        assert asked.returncode == 0, asked.stderr
        first = json.loads(asked.stdout)
        assert first["critique"]["score"] == 1 and first["retry_offered"] is True
        assert events.RETRY_OFFERED in first["events"]
        shown = local2("ask", CAPITAL, "--backend", "ollama", "--model", STRONG, env=env)
        assert "local2 retry" in shown.stderr  # the offer, in words, at a terminal

        retried = local2("retry", first["session_id"], first["query_id"], "--json", env=env)
        assert retried.returncode == 0, retried.stderr
        second = json.loads(retried.stdout)
        assert "Paris" in second["answer"] and second["critique"]["score"] == 4
        assert second["retry"]["first"]["score"] == 1 and second["retry"]["shown"] == 2
        assert events.RETRY_STARTED in second["events"]
        assert events.RETRY_OFFERED not in second["events"]
        # The model saw its first answer and the critique.
        seen = generation_requests(server, STRONG)[-1]["messages"]
        assert seen[-2]["content"] == first["answer"]
        assert "graded your answer above 1/5" in seen[-1]["content"]

        again = local2("retry", first["session_id"], second["query_id"], env=env)
        assert again.returncode != 0 and "already a second attempt" in again.stderr
        switched = local2("retry", first["session_id"], second["query_id"], "--show", "1", env=env)
        assert switched.returncode == 0, switched.stderr

    # The CLI's data directory is this test's LOCAL2_HOME (see conftest): read it here.
    agent = Agent(
        load_settings(), chat_model=ScriptedChatModel(), tools=[], memory=None, critic=None
    )
    turns = agent.sessions.history(first["session_id"])
    assert [t["assistant"] for t in turns] == [first["answer"]]  # attempt 1, as switched
    agent.close()


def test_a_retry_that_grades_lower_keeps_the_first_attempt(tmp_path: Path) -> None:
    """The higher-graded attempt is shown: here the first, though the retry is kept."""

    class Worse:
        def __init__(self) -> None:
            self.rules = RuleBrain()

        def __call__(self, request: dict[str, Any]) -> Any:
            text = json.dumps(request.get("messages"))
            if "###Task Description" in text:
                return self.rules(request)
            if "A reviewer graded" in text:
                return Reply(content="I don't know, sorry.")
            return Reply(content="The GIL is CPython's global interpreter lock.")

    settings_override = {"critic": {"retry_below": 4}}
    with FakeOllama(Worse(), models=[STRONG, "nomic-embed-text"]) as server:
        settings = load_settings(
            overrides={
                "system": {"ollama_host": server.url, "data_dir": str(tmp_path / "d")},
                "generator": {"backend": "ollama", "model": STRONG},
                **settings_override,
            }
        )
        agent = Agent(settings, backend="ollama")
        first = agent.turns.ask("What is the GIL?", "s1")
        assert first["critique"]["score"] == 4 and first["retry_offered"]
        items = list(agent.retries.retry("s1", first["query_id"]))
        second = items[-1][1]
        assert second["critique"]["score"] == 1
        assert second["retry"]["shown"] == 1
        assert events.HISTORY_SWITCHED in second["events"]
        assert agent.sessions.history("s1")[-1]["assistant"] == first["answer"]
        agent.retries.show("s1", second["query_id"], 2)
        assert agent.sessions.history("s1")[-1]["assistant"] == second["answer"]
        with pytest.raises(CannotRetry, match="already a second attempt"):
            agent.retries.retry_request("s1", second["query_id"])
        agent.close()


def test_http_api_compare_prefer_arena_and_retry(server: FakeOllama, tmp_path: Path) -> None:
    from local2.http._app import create_api
    from tests.kit.served import Served

    agent = make_agent(tmp_path, server.url)
    with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
        asked = {"query": CAPITAL, "model_b": WEAK, "wait": "critique"}  # the judge's verdict
        turn = client.post("/query", json=asked).json()
        assert turn["pairwise"]["winner"] == "a"
        ids = {"session_id": turn["session_id"], "query_id": turn["query_id"]}
        nothing = client.post("/feedback", json=ids)
        assert nothing.status_code == 422 and "preferred" in nothing.text
        picked = client.post("/feedback", json={**ids, "preferred": "b"})
        assert picked.status_code == 200 and picked.json()["continues"] == "b"
        history = client.get(f"/sessions/{turn['session_id']}/history").json()
        assert history["turns"][-1]["assistant"] == turn["respondents"]["b"]["answer"]
        csv_text = client.get("/arena", params={"format": "csv"}).text
        assert csv_text.splitlines()[0].startswith("voters,model,rating")
        assert f"people,{WEAK}" in csv_text and f"judge,{STRONG}" in csv_text
        refused = client.post(f"/sessions/{turn['session_id']}/retry", json={"query_id": "x"})
        assert refused.status_code == 404
        compared = client.post(
            f"/sessions/{turn['session_id']}/retry", json={"query_id": turn["query_id"]}
        )
        assert compared.status_code == 409 and "prefer" in compared.json()["detail"]
        bad = client.post("/query", json={"query": CAPITAL, "temperature_b": 7})
        assert bad.status_code == 422
    agent.close()


def test_a_plain_turn_keeps_its_topology_and_a_compare_turn_is_checkpointed(
    server: FakeOllama, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, server.url)
    agent.turns.ask(CAPITAL, "plain")
    plain = [r["node"] for r in reversed(agent.sessions.checkpoints("plain"))]
    # The chat graph's own path, untouched by compare.
    plain_path = ["input", "__start__", "receive", "generate", "publish"]
    assert plain == [*plain_path, "critique,ingest"]
    payload = agent.turns.ask(CAPITAL, "pair", options=agent.turns.options(WEAK))
    nodes = [r["node"] for r in reversed(agent.sessions.checkpoints("pair"))]
    assert nodes == [
        "input",
        "__start__",
        "receive",
        "compare",
        "respond,respond",
        "publish_pair",
        "critique_pair,ingest_pair",
        "settle_pair",
    ]
    # Time travel: replaying from before the respondents answers again, as a new branch.
    before = next(r for r in agent.sessions.checkpoints("pair") if r["node"] == "compare")
    replayed = agent.timetravel.replay("pair", before["checkpoint_id"])
    assert replayed["respondents"]["b"]["answer"] == payload["respondents"]["b"]["answer"]
    assert replayed["pairwise"]["winner"] == "a"
    agent.close()


def test_both_respondents_can_wait_for_approval_and_each_is_answered(tmp_path: Path) -> None:
    """A side effect in each branch pauses the turn; each request is decided in turn."""
    from local2.contracts.approval import answer
    from local2.models._backend import ChatBackend
    from tests.chat.helpers import Notes, make_agent, obeying_script

    def two_obeying(where: Path, notes: Notes) -> Agent:
        agent = make_agent(where, notes)
        model_b = ScriptedChatModel(replies=obeying_script(), repeat_last=True)
        agent.services.model_factory = lambda model, temperature: ChatBackend(
            model_b, "scripted-b", "custom"
        )
        return agent

    notes = Notes()
    agent = two_obeying(tmp_path / "one", notes)
    compare = agent.turns.options("scripted-b")
    paused = list(agent.turns.stream("Summarise https://a.example/", "s1", options=compare))[-1][1]
    assert paused["status"] == "awaiting_approval"
    first = agent.approvals.pending("s1")
    assert first is not None and first["interrupt_id"]
    again = agent.approvals.decide("s1", True)
    assert again["status"] == "awaiting_approval"  # the other respondent asks too
    second = agent.approvals.pending("s1")
    assert second is not None and second["interrupt_id"] != first["interrupt_id"]
    done = agent.approvals.decide("s1", False)
    assert done["status"] == "done"
    assert notes.written == ["PLANTED"]  # one approved, one denied
    errors = sorted(
        str(c["error"]) for r in done["respondents"].values() for c in r["tool_calls"] if c["error"]
    )
    assert errors == ["denied by the person"]
    assert all(r["answer"] == "The bridge opened in 1932." for r in done["respondents"].values())

    # With someone to ask, the turn asks each request as it comes and runs to the end.
    asked: list[str] = []

    def deny(request: dict) -> dict:
        asked.append(request["query_id"])
        return answer(request, False)

    agent.close()
    notes = Notes()
    agent = two_obeying(tmp_path / "two", notes)
    final = agent.turns.ask("Summarise https://a.example/", "s2", approve=deny, options=compare)
    assert final["status"] == "done" and len(asked) == 2
    assert notes.written == []
    agent.close()


def test_on_postgres_every_process_shares_the_arena(
    server: FakeOllama, tmp_path: Path, postgres_url: str
) -> None:
    """``checkpointer: postgres``: the judge's vote cast in one process and the person's
    preference given through another land in the same table on the real server, and
    ``local2 arena`` on a third machine's settings reads them; no local file is written."""

    def on_postgres(name: str) -> Agent:
        settings = load_settings(
            overrides={
                "system": {
                    "ollama_host": server.url,
                    "data_dir": str(tmp_path / name),
                    "checkpointer": "postgres",
                    "postgres_url": postgres_url,
                },
                "generator": {"backend": "ollama", "model": STRONG},
                "web": {"search": {"provider": "mock"}},
                "memory": {"enabled": False},
            }
        )
        return Agent(settings, backend="ollama", model=STRONG)

    first, second = on_postgres("a"), on_postgres("b")
    payload = first.turns.ask(CAPITAL, "s1", options=first.turns.options(WEAK))
    assert payload["pairwise"]["winner"] == "a"
    second.ratings.prefer("s1", payload["query_id"], "b")
    seen = [(v.voter, v.winner) for v in first.votes.all()]
    assert seen == [("judge", "a"), ("person", "b")]
    first.close()
    second.close()

    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "system.yaml").write_text("checkpointer: postgres\n")
    env = {
        "LOCAL2_HOME": str(tmp_path / "c"),
        "LOCAL2_CONFIG": str(conf),
        "LOCAL2_POSTGRES_URL": postgres_url,
    }
    arena = local2("arena", "--json", env=env)
    assert arena.returncode == 0, arena.stderr
    table = json.loads(arena.stdout)
    assert table["votes"] == {"people": 1, "judge": 1}
    assert table["people"][0]["model"] == WEAK and table["judge"][0]["model"] == STRONG
    assert not list(tmp_path.rglob("*.sqlite"))


def test_a_compared_turn_that_only_asks_to_remember_says_what_was_saved(
    server: FakeOllama, tmp_path: Path
) -> None:
    """As in chat: the save answers the turn ("Saved to memory: ..."), with no model asked and
    nothing to compare (two models replying to a save wrote apologies, not what was kept)."""
    agent = make_agent(tmp_path, server.url)
    payload = agent.turns.ask(
        "Remember that my favourite colour is green.", "s1", options=agent.turns.options(WEAK)
    )
    assert payload["answer"] == "Saved to memory: The user's favourite colour is green."
    assert not generation_requests(server, STRONG) and not generation_requests(server, WEAK)
    assert not payload.get("respondents") and not (payload.get("pairwise") or {}).get("winner")
    assert agent.sessions.history("s1")[-1]["assistant"] == payload["answer"]
    agent.close()
