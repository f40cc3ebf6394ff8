"""The person first: a session's next question never waits for the last answer's grade.

Real parts throughout: uvicorn serving the HTTP API, ``ChatOllama`` against the
Ollama-protocol test server, the SQLite checkpointer and turn log, Chroma memory, the real
critic. The judge is slow (its grading replies wait ``JUDGE_DELAY_S`` before their first
byte, as a 12B judge reading a long prompt does), so a question asked while it grades is a
fact the test waits for, never a timing it assumes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import Settings, load_settings
from local2.http._app import create_api
from local2.service.agent import Agent
from local2.storage._audit_log import show_run
from local2_testkit.brains import HEDGE_MARKER, HedgingBrain, ModelBrains
from local2_testkit.ollama_server import DEFAULT_MODELS, FakeOllama, RuleBrain
from tests.kit.served import Served as ServedApi
from tests.people.helpers import (
    FRANCE,
    GIL,
    HELLO,
    WEAK,
    SlowJudge,
    all_graded,
    asked_to_grade,
    graded,
    grades,
    history,
    wait_for,
)


def settings_for(fake: FakeOllama, data: Path, **sections: dict[str, Any]) -> Settings:
    overrides: dict[str, Any] = {
        "system": {"ollama_host": fake.url, "data_dir": str(data)},
        "generator": {"backend": "ollama"},
        "memory": {"embedder": "lexical"},
        "web": {"search": {"provider": "mock"}},
    }
    overrides.update(sections)
    return load_settings(overrides=overrides)


@pytest.fixture
def judge() -> SlowJudge:
    return SlowJudge(ModelBrains({WEAK: HedgingBrain()}, default=RuleBrain()))


@pytest.fixture
def fake(judge: SlowJudge) -> Iterator[FakeOllama]:
    with FakeOllama(judge, models=[*DEFAULT_MODELS, WEAK]) as server:
        yield server


def serve(settings: Settings) -> tuple[Agent, ServedApi]:
    agent = Agent(settings, backend="ollama")
    return agent, ServedApi(create_api(agent))


@pytest.fixture
def api(fake: FakeOllama, tmp_path: Path) -> Iterator[tuple[str, Agent]]:
    agent, served = serve(settings_for(fake, tmp_path / "data"))
    with served as url:
        yield url, agent
    agent.close()


def noted_grades(settings: Settings) -> dict[str, int]:
    """How many grades the turn log noted per question (a grade written twice counts 2)."""
    db = sqlite3.connect(str(settings.system.checkpoint_path))
    try:
        rows = db.execute(
            'SELECT t."user", COUNT(*) FROM local2_turn_notes n '
            "JOIN local2_turns t ON t.id = n.turn_id WHERE n.kind = 'critique' "
            'GROUP BY t."user"'
        ).fetchall()
    finally:
        db.close()
    return {user: count for user, count in rows}


def late_results(agent: Agent, session: str, query_id: str) -> list[dict[str, Any]]:
    """The ``critique.result`` entries for ``query_id`` in the session's head state."""
    return [
        e
        for e in agent.sessions.state(session).get("event_log") or []
        if e.get("subject") == "critique.result" and e.get("query_id") == query_id
    ]


def test_a_new_question_cancels_the_running_grade_which_comes_later(
    api: tuple[str, Agent], fake: FakeOllama
) -> None:
    url, agent = api
    session = "quick"
    with httpx.Client(base_url=url, timeout=120) as client:
        first = client.post("/query", json={"query": FRANCE, "session_id": session}).json()
        assert first["critique_pending"] is True
        wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
        second = client.post("/query", json={"query": GIL, "session_id": session}).json()
        assert "GIL" in second["answer"]
        # The first answer's grading was cancelled for the second question: the server
        # saw its request closed before any reply, and no grade was given yet.
        closed = wait_for(lambda: graded(fake, FRANCE, closed=True), "the cancelled request")
        assert len(closed) == 1 and not graded(fake, FRANCE, closed=False)
        assert not grades(client, session)[FRANCE]
        # Once the session is quiet, both answers are graded; the first one later.
        shown = wait_for(lambda: all_graded(client, session, [FRANCE, GIL]), "both grades")
    assert shown[FRANCE]["score"] == 4 and shown[GIL]["score"] == 4
    assert len(graded(fake, FRANCE, closed=False)) == 1  # judged once more, in full
    assert agent.turns.wait_idle(60)
    # Each grade written once: one note per turn, one late critique.result, the audit record.
    assert noted_grades(agent.settings) == {FRANCE: 1, GIL: 1}
    late = late_results(agent, session, first["query_id"])
    assert len(late) == 1 and late[0]["late"] is True and late[0]["score"] == 4
    record = show_run(agent.settings, first["query_id"])
    assert record is not None and record["critique"]["score"] == 4
    subjects = [e["subject"] for e in record["events"]]
    assert subjects.count("critique.deferred") == 1 and subjects.count("critique.result") == 1
    state = agent.sessions.state(session)
    assert state["pending_grades"] == {} and state["critique"]["score"] == 4  # the GIL turn's
    assert agent.services.memory is not None
    stored = agent.services.memory.list(100, kind="episodic")
    assert [e.get("critic_score") for e in stored if e["query_id"] == first["query_id"]] == [4]


def test_a_question_sent_during_the_answer_does_not_wait_for_its_grade(
    api: tuple[str, Agent], fake: FakeOllama, judge: SlowJudge
) -> None:
    """The next question waits for the last answer, never for its grade: asked while the
    answer is still coming, it makes the critic give way before it has even asked."""
    url, _ = api
    judge.answer_delay_s = 1.0
    with httpx.Client(base_url=url, timeout=120) as client, ThreadPoolExecutor(1) as pool:
        first = pool.submit(client.post, "/query", json={"query": FRANCE, "session_id": "eager"})
        wait_for(lambda: any(FRANCE in str(b) for b in fake.chat_requests), "the first answer")
        second = client.post("/query", json={"query": GIL, "session_id": "eager"}).json()
        assert "Paris" in first.result(timeout=120).json()["answer"] and "GIL" in second["answer"]
        # The second answer did not wait for the first one's grade: none was asked for yet.
        assert not graded(fake, FRANCE, closed=False) and not grades(client, "eager")[FRANCE]
        shown = wait_for(lambda: all_graded(client, "eager", [FRANCE, GIL]), "both grades")
    assert shown[FRANCE]["score"] == 4


def test_the_late_grade_forks_nothing(api: tuple[str, Agent], fake: FakeOllama) -> None:
    """The owed grade lands as one new checkpoint on the session's head: one branch, every
    checkpoint on it, the turns' own checkpoints as they were written."""
    url, agent = api
    with httpx.Client(base_url=url, timeout=120) as client:
        client.post("/query", json={"query": FRANCE, "session_id": "linear"})
        wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
        client.post("/query", json={"query": GIL, "session_id": "linear"})
        wait_for(lambda: all_graded(client, "linear", [FRANCE, GIL]), "both grades")
    assert agent.turns.wait_idle(60)
    rows = agent.sessions.checkpoints("linear", 200)
    assert all(r["current"] and not r["abandoned"] for r in rows)
    parents = [r["parent_id"] for r in rows]
    assert len(set(parents)) == len(parents)  # no checkpoint has two children
    head = rows[0]
    assert head["source"] == "update" and head["next"] == []
    # The first turn's end is kept as it was: its grade owed, not rewritten.
    france_end = next(r for r in rows if r["query_id"] != head["query_id"] and r["next"] == [])
    then = agent.sessions.state("linear", france_end["checkpoint_id"])
    assert then["critique"] is None and set(then["pending_grades"]) == {then["query_id"]}
    # The session continues from the head as always.
    after = agent.turns.ask(HELLO, "linear")
    assert [t["user"] for t in agent.sessions.history("linear")] == [FRANCE, GIL, HELLO]
    assert after["answer"]


def test_without_yielding_the_next_question_waits_for_the_grade(
    fake: FakeOllama, tmp_path: Path
) -> None:
    """``critic.yield_to_new_turns: false`` keeps the old order: the second answer comes
    only after the first one's grade, and no grading request is cancelled."""
    settings = settings_for(fake, tmp_path / "data", critic={"yield_to_new_turns": False})
    agent, served = serve(settings)
    with served as url, httpx.Client(base_url=url, timeout=120) as client:
        client.post("/query", json={"query": FRANCE, "session_id": "patient"})
        wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
        client.post("/query", json={"query": GIL, "session_id": "patient"}).raise_for_status()
        # By the time the second answer is back, the first turn was graded in full.
        assert grades(client, "patient")[FRANCE]["score"] == 4
        assert len(graded(fake, FRANCE, closed=False)) == 1
        assert not graded(fake, FRANCE, closed=True)
    agent.close()
    assert noted_grades(settings)[FRANCE] == 1


def test_wait_critique_returns_the_turns_own_grade_after_the_next_question(
    api: tuple[str, Agent], fake: FakeOllama
) -> None:
    url, _ = api
    with httpx.Client(base_url=url, timeout=120) as client, ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(
            client.post,
            "/query?wait=critique",
            json={"query": FRANCE, "session_id": "patient-client"},
        )
        wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
        quick = client.post("/query", json={"query": GIL, "session_id": "patient-client"})
        assert quick.json()["critique_pending"] is True
        assert not waiting.done()  # its grade gave way to the second question
        graded_turn = waiting.result(timeout=120).json()
    assert graded_turn["query"] == FRANCE and graded_turn["critique"]["score"] == 4
    assert graded_turn["critique_pending"] is False
    results = [e for e in graded_turn["event_log"] if e["subject"] == "critique.result"]
    assert [(e["query_id"], e.get("late")) for e in results] == [(graded_turn["query_id"], True)]


def test_a_compare_turn_gives_way_and_its_judge_verdict_comes_later(
    api: tuple[str, Agent], fake: FakeOllama
) -> None:
    url, agent = api
    with httpx.Client(base_url=url, timeout=120) as client:
        pair = client.post(
            "/query", json={"query": FRANCE, "session_id": "pair", "model_b": WEAK}
        ).json()
        assert HEDGE_MARKER in pair["respondents"]["b"]["answer"]
        wait_for(lambda: asked_to_grade(fake, FRANCE), "the judge to be asked")
        client.post("/query", json={"query": GIL, "session_id": "pair"})
        wait_for(lambda: graded(fake, FRANCE, closed=True), "the judge's requests closed")
        wait_for(lambda: all_graded(client, "pair", [FRANCE, GIL]), "both grades")
    assert agent.turns.wait_idle(60)
    # The verdict and both grades landed once: the judge's arena vote, the audit record.
    votes = [v for v in agent.votes.all("judge") if v.query_id == pair["query_id"]]
    assert [v.winner for v in votes] == ["a"]
    record = show_run(agent.settings, pair["query_id"])
    assert record is not None
    subjects = [e["subject"] for e in record["events"]]
    assert subjects.count("pairwise.result") == 1 and subjects.count("critique.result") == 2
    verdict = next(e for e in record["events"] if e["subject"] == "pairwise.result")
    assert verdict["winner"] == "a" and verdict["late"] is True
    assert noted_grades(agent.settings) == {FRANCE: 1, GIL: 1}


def test_a_retry_gives_way_keeping_the_attempt_shown(fake: FakeOllama, tmp_path: Path) -> None:
    """A second attempt whose grade gave way keeps the attempt the person saw: the next
    question continues from it, and its grade still comes."""
    settings = settings_for(fake, tmp_path / "data", generator={"backend": "ollama", "model": WEAK})
    agent, served = serve(settings)
    with served as url, httpx.Client(base_url=url, timeout=120) as client:
        first = client.post(
            "/query?wait=critique", json={"query": FRANCE, "session_id": "again"}
        ).json()
        assert first["critique"]["score"] == 1 and first["retry_offered"] is True
        asked = asked_to_grade(fake, FRANCE)
        with ThreadPoolExecutor(1) as pool:
            retried = pool.submit(
                client.post,
                "/sessions/again/retry",
                json={"query_id": first["query_id"]},
            )
            wait_for(lambda: asked_to_grade(fake, FRANCE) > asked, "the retry's grading")
            client.post("/query", json={"query": GIL, "session_id": "again"})
            second = retried.result(timeout=120)
        assert second.status_code == 200, second.text
        turns = wait_for(lambda: all_graded(client, "again", [FRANCE, GIL]), "the grades")
        shown = history(client, "again")
    assert "Paris" in shown[0]["assistant"]  # the second attempt, the one the person saw
    assert turns[FRANCE]["score"] == 4
    assert agent.turns.wait_idle(60)
    agent.close()


def test_a_server_stopped_with_grades_owed_gives_them_when_back(
    fake: FakeOllama, judge: SlowJudge, tmp_path: Path
) -> None:
    """Closing stops a grade being given (its request is cancelled); the grade stays owed in
    the session's state, and the server gives it when it starts again."""
    settings = settings_for(fake, tmp_path / "data")
    agent = Agent(settings, backend="ollama")
    first = agent.turns.start(FRANCE, "restart", tokens=False).until_answer()
    wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
    judge.delay_s = 0.2  # the second answer is graded at once
    agent.turns.start(GIL, "restart", tokens=False).until_answer()
    wait_for(
        lambda: agent.sessions.history("restart", grades=True)[-1].get("critique"), "GIL graded"
    )
    judge.delay_s = 60.0  # the first answer's late grade takes long: the server stops first
    wait_for(lambda: asked_to_grade(fake, FRANCE) == 2, "the late grade to start")
    agent.close(wait_s=0)
    wait_for(lambda: len(graded(fake, FRANCE, closed=True)) == 2, "the late grade cancelled")

    judge.delay_s = 0.2
    again = Agent(settings, backend="ollama")
    try:
        assert set(again.sessions.state("restart")["pending_grades"]) == {first["query_id"]}
        assert not again.sessions.history("restart", grades=True)[0].get("critique")
        assert again.late_grades.recover() == 1
        assert again.turns.wait_idle(90)
        shown = {t["user"]: t["critique"] for t in again.sessions.history("restart", grades=True)}
        assert shown[FRANCE]["score"] == 4
        assert not again.sessions.state("restart")["pending_grades"]
    finally:
        again.close()
    assert noted_grades(settings) == {FRANCE: 1, GIL: 1}


def test_a_cancelled_model_request_is_closed_before_its_first_byte() -> None:
    """What the critic's giving way rests on: the request is the model's async call, and
    cancelling it closes the connection at once, which the server sees (as Ollama does)."""
    from langchain_core.messages import HumanMessage
    from langchain_ollama import ChatOllama

    from local2.errors import GaveWay
    from local2.models._cancellable import Cancellation, cancellable_invoke

    with FakeOllama(RuleBrain(), delay_s=30.0) as server:
        chat = ChatOllama(model="qwen3:4b", base_url=server.url)
        cancel = Cancellation()
        threading.Timer(0.3, cancel.set).start()
        with pytest.raises(GaveWay):
            cancellable_invoke(chat, [HumanMessage(FRANCE)], cancel=cancel)
        closed = wait_for(lambda: server.closed_requests, "the server to see it closed")
        assert [r.path for r in closed] == ["/api/chat"]
        with pytest.raises(GaveWay):  # asked after the cancel: never sent
            cancellable_invoke(chat, [HumanMessage(GIL)], cancel=cancel)
        assert len(server.chat_requests) == 1
        server.delay_s = 0.0  # the client still works: its other connections are fine
        reply = cancellable_invoke(chat, [HumanMessage(FRANCE)], timeout_s=30)
        assert "Paris" in str(reply.content)


def test_the_app_puts_each_late_grade_under_its_own_answer() -> None:
    """The chat's "grading…" places are found by turn (``query_ids``: index of each question,
    string keys too, as a browser's state may send them) and each filled with its grade."""
    from gradio import ChatMessage

    import local2.ui._render as render
    from local2.ui._late_grades import GRADING, awaiting, with_grades

    def grading() -> ChatMessage:
        return ChatMessage(role="assistant", content="…", metadata={"title": GRADING})

    chat = [
        ChatMessage(role="user", content=FRANCE),
        ChatMessage(role="assistant", content="Paris."),
        grading(),
        {"role": "user", "content": GIL},
        {"role": "assistant", "content": "A lock."},
        {"role": "assistant", "content": "…", "metadata": {"title": GRADING}},
    ]
    ids = {"0": "q-france", "3": "q-gil"}
    assert awaiting(chat, ids) == {2: "q-france", 5: "q-gil"}
    filled, left = with_grades(chat, ids, {"q-france": {"score": 4, "feedback": "Right."}})
    assert left == 1 and filled[5] is chat[5]
    assert filled[2].metadata["title"] == f"{render.CRITIC}: 4/5"
    assert awaiting(filled, ids) == {5: "q-gil"}
