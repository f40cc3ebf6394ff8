"""The eval runner through the real parts: ChatOllama against the Ollama-protocol server, the
real chat graph and research graph, the corpus search over the demo set's documents, the
run folder on disk.

The stand-in (``EvalBrain``) answers a known subset correctly, abstains on another and is
wrong on the rest, searching the corpus first for some; the runner must report exactly
those counts and grades, evidence found or never found, the tools, tokens and sessions that
open with exactly their own question.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.contracts._people import LOCAL, Person
from local2.errors import RunBusy, UnknownEvalRun
from local2.evals import DEMO_PATH, load_set
from local2.service.agent import Agent
from local2_testkit.eval_brain import ABSTAIN, EvalBrain
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain

DEMO = load_set(DEMO_PATH)
FIRST = DEMO.questions[:9]
CORRECT, ABSTAINED, WRONG = FIRST[:3], FIRST[3:6], FIRST[6:]
SEARCHED = {q.question for q in (*CORRECT, *WRONG[:2])}


def scripted_answers() -> dict[str, str]:
    answers = {q.question: f"It is {q.answers[0]}." for q in CORRECT}
    answers |= {q.question: ABSTAIN for q in ABSTAINED}
    answers |= {q.question: "It is Penhallow Quay, in 1066." for q in WRONG}
    return answers


def make_agent(tmp_path: Path, url: str) -> Agent:
    settings = load_settings(
        overrides={
            "system": {"ollama_host": url, "data_dir": str(tmp_path / "data")},
            "generator": {"backend": "ollama"},
            "memory": {"embedder": "lexical"},
        }
    )
    return Agent(settings, backend="ollama")


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[tuple[Agent, EvalBrain, FakeOllama]]:
    brain = EvalBrain(scripted_answers(), search=SEARCHED, fallback=ResearchBrain())
    with FakeOllama(brain) as fake:
        agent = make_agent(tmp_path, fake.url)
        yield agent, brain, fake
        agent.close()


def run_to_end(items: Iterator[tuple[str, Any]]) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {}
    for kind, data in items:
        seen.setdefault(kind, []).append(data)
    return seen


def test_the_runner_reports_exactly_the_stand_ins_grades(
    stand_in: tuple[Agent, EvalBrain, FakeOllama],
) -> None:
    agent, brain, _ = stand_in
    seen = run_to_end(agent.evals.start("demo", limit=9, concurrency=3))
    final = seen["final"][0]
    summary = final["summary"]
    assert final["status"] == "done"
    assert (summary["correct"], summary["not_attempted"], summary["incorrect"]) == (3, 3, 3)
    assert (summary["graded"], summary["ungraded"], summary["errors"]) == (9, 0, 0)
    assert summary["accuracy"]["k"] == 3 and summary["accuracy"]["n"] == 9
    assert brain.grades == {"CORRECT": 3, "NOT_ATTEMPTED": 3, "INCORRECT": 3}
    # Every question answered once, by one session of its own.
    assert set(brain.asked) == {q.question for q in FIRST}
    assert set(brain.asked.values()) == {1}

    results = {r["id"]: r for r in agent.evals.show(final["manifest"]["run_id"])["results"]}
    assert [results[q.id]["grade"] for q in FIRST] == ["correct"] * 3 + ["not_attempted"] * 3 + [
        "incorrect"
    ] * 3
    assert all(results[q.id]["contains_gold"] for q in CORRECT)
    # Searched: the gold evidence reached the model in the corpus search's result.
    for q in (*CORRECT, *WRONG[:2]):
        record = results[q.id]
        assert record["tools"] == ["web_search"]
        assert record["evidence"]["found"] == record["evidence"]["total"] >= 1, record
        assert record["evidence"]["items"][0]["source"] == "tool:web_search"
    assert [results[q.id]["diagnosis"] for q in WRONG] == [
        "found_misread",
        "found_misread",
        "never_found",
    ]
    assert results[WRONG[2].id]["tools"] == [] and results[WRONG[2].id]["evidence"]["found"] == 0
    # Tokens per question (the fake server counts them as Ollama does), and time.
    for record in results.values():
        assert record["tokens"] is not None and record["tokens"]["completion"] >= 1
        assert record["time_s"] > 0
    # Each session holds exactly its own question and answer (no crossing at concurrency 3).
    for q in FIRST:
        history = agent.sessions.history(results[q.id]["session_id"])
        assert [t["user"] for t in history] == [q.question]
        assert history[0]["assistant"] == results[q.id]["answer"]
    # Progress ends at 9 of 9 with nothing left to wait for.
    last = seen["progress"][-1]
    assert (last["recorded"], last["total"], last["running"], last["eta_s"]) == (9, 9, [], 0.0)


def test_research_mode_answers_from_the_ledger(
    stand_in: tuple[Agent, EvalBrain, FakeOllama],
) -> None:
    agent, brain, _ = stand_in
    brain.answers.clear()  # every request that is not a grade goes to the research brain
    seen = run_to_end(agent.evals.start("demo", mode="research", limit=2))
    run_id = seen["final"][0]["manifest"]["run_id"]
    results = agent.evals.show(run_id)["results"]
    assert len(results) == 2
    for record in results:
        assert record["tools"][:2] == ["web_search", "web_fetch"]
        assert record["evidence"]["found"] >= 1  # the corpus document was read into the ledger
        assert record["evidence"]["items"][0]["source"].startswith("research:")
        payload = agent.research.payload(record["session_id"])  # the run opens in research
        assert payload["report"] == record["answer"] and record["answer"]
        assert record["tokens"] is not None
    # Kept (each opens above, and is in the run index), but out of the person's research list.
    assert all(agent.research.index.get(r["session_id"]) for r in results)
    assert agent.research.runs(owner=None) == []


def test_someone_elses_run_is_as_unknown_as_none(
    stand_in: tuple[Agent, EvalBrain, FakeOllama],
) -> None:
    agent, _, _ = stand_in
    alice, bob = Person("alice"), Person("bob")
    seen = run_to_end(agent.evals.start("demo", limit=1, person=alice))
    run_id = seen["final"][0]["manifest"]["run_id"]
    for attempt in (
        lambda: agent.evals.show(run_id, bob),
        lambda: agent.evals.resume(run_id, person=bob),
        lambda: agent.evals.stop(run_id, bob),
        lambda: agent.evals.compare(run_id, run_id, bob),
    ):
        with pytest.raises(UnknownEvalRun) as crossed:
            attempt()
        assert str(crossed.value) == f"No eval run '{run_id}'."
    assert [r["run_id"] for r in agent.evals.runs(bob.name)] == []
    assert [r["run_id"] for r in agent.evals.runs(alice.name)] == [run_id]
    assert agent.evals.show(run_id, alice)["summary"]["recorded"] == 1
    assert agent.evals.runs(LOCAL.name) == []


def test_stop_ends_the_run_and_resume_asks_only_what_is_left(
    stand_in: tuple[Agent, EvalBrain, FakeOllama],
) -> None:
    agent, _brain, fake = stand_in
    fake.delay_s = 0.3  # each model reply takes a moment: the Stop lands mid-run
    items = agent.evals.start("demo", limit=9, concurrency=2)
    stopped = threading.Event()
    run_id = ""
    final: dict[str, Any] = {}
    for kind, data in items:
        if kind == "run":
            run_id = data["run_id"]
        elif kind == "question" and not stopped.is_set():
            assert agent.evals.stop(run_id) is True
            stopped.set()
        elif kind == "final":
            final = data
    assert final["status"] == "stopped"
    recorded = {r["id"] for r in agent.evals.show(run_id)["results"]}
    assert 1 <= len(recorded) < 9
    assert agent.evals.runs()[0]["status"] == "stopped"
    fake.delay_s = 0.0
    resumed = run_to_end(agent.evals.resume(run_id))
    assert resumed["run"][0]["recorded"] == len(recorded) and resumed["run"][0]["resumed"]
    asked_again = {r["id"] for r in resumed.get("question", [])}
    assert asked_again == {q.id for q in FIRST} - recorded  # none twice, none lost
    detail = agent.evals.show(run_id)
    assert detail["status"] == "done" and detail["summary"]["recorded"] == 9
    lines = (agent.settings.data_dir / "evals" / run_id / "results.jsonl").read_text()
    assert len(lines.splitlines()) == 9
    busy = agent.evals.resume(run_id)  # nothing left to ask, but it holds the run until done
    assert next(busy)[0] == "run"
    with pytest.raises(RunBusy):
        agent.evals.resume(run_id)
    assert [kind for kind, _ in busy][-1] == "final"
