"""``POST /eval`` and ``GET /eval`` over uvicorn for two people (and an admin), with httpx.

Alice runs the demo set's first questions through the real API (the Ollama-protocol server
answers as the eval stand-in, the corpus is the demo's); the stream carries the run, its
progress with the time left, each question and the report. Every read or write Bob aims at
her run answers exactly as an unknown id does; an admin may read it (written down). A set
is named, never a path on the server. An eval run's sessions stay out of the session list
(the real SQLite store) and still open from the run's results. A request may choose the
backend and model that answer; an unknown backend is refused with the ones known.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.evals import DEMO_PATH, load_set
from local2.http._app import create_api
from local2.service.agent import Agent
from local2_testkit.eval_brain import EvalBrain
from local2_testkit.ollama_server import FakeOllama
from tests.kit.helpers import bearer_clients
from tests.kit.served import Served
from tests.research.helpers import read_events

QUESTIONS = load_set(DEMO_PATH).questions[:3]


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    answers = {q.question: f"It is {q.answers[0]}." for q in load_set(DEMO_PATH).questions}
    with FakeOllama(EvalBrain(answers)) as fake:
        settings = load_settings(
            overrides={
                "system": {"ollama_host": fake.url, "data_dir": str(tmp_path / "data")},
                "generator": {"backend": "ollama", "openai": {"base_url": f"{fake.url}/v1"}},
                "memory": {"embedder": "lexical"},
            }
        )
        agent = Agent(settings, backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        tokens["carol"] = people.add("carol", admin=True)
        with Served(create_api(agent)) as url, bearer_clients(url, tokens, timeout=120) as clients:
            yield {"agent": agent, "clients": clients, "fake": fake}
        agent.close()


def test_post_eval_streams_a_run_that_only_its_owner_sees(team: dict[str, Any]) -> None:
    alice, bob, carol = (team["clients"][n] for n in ("alice", "bob", "carol"))
    with alice.stream("POST", "/eval", json={"set": "demo", "limit": 3}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        received = read_events(response)
    kinds = [name for name, _ in received]
    assert kinds[0] == "run" and kinds[-1] == "done"
    assert kinds.count("question") == 3
    run_id = received[0][1]["run_id"]
    progress = [data for name, data in received if name == "progress"]
    assert progress[-1]["recorded"] == 3 and progress[-1]["total"] == 3
    assert any(p["eta_s"] is not None for p in progress)  # the time left, once one is done
    report = received[-1][1]
    assert report["status"] == "done" and report["summary"]["correct"] == 3
    assert report["manifest"]["owner"] == "alice"

    shown = alice.get(f"/eval/{run_id}")
    assert shown.status_code == 200
    results = shown.json()["results"]
    assert [r["id"] for r in results] == [q.id for q in QUESTIONS]
    session = results[0]["session_id"]
    assert alice.get(f"/sessions/{session}/history").status_code == 200  # opens in time travel
    assert bob.get(f"/sessions/{session}/history").status_code == 404
    assert [r["run_id"] for r in alice.get("/eval").json()["runs"]] == [run_id]

    def as_unknown(method: str, path: str, **body: Any) -> bool:
        crossed = bob.request(method, path.replace("{}", run_id), **body)
        unknown = "eval-20200101-000000-abcdef"
        control = bob.request(
            method,
            path.replace("{}", unknown),
            **{k: json.loads(json.dumps(v).replace(run_id, unknown)) for k, v in body.items()},
        )
        same = crossed.json() == json.loads(control.text.replace(unknown, run_id))
        return crossed.status_code == control.status_code == 404 and same

    crossings = [
        f"{method} {path}"
        for method, path, body in [
            ("GET", "/eval/{}", {}),
            ("POST", "/eval/{}/stop", {}),
            ("GET", "/eval/{}/compare/{}", {}),
            ("POST", "/eval", {"json": {"resume": run_id}}),
        ]
        if not as_unknown(method, path, **body)
    ]
    assert crossings == []
    assert bob.get("/eval").json()["runs"] == []
    # The admin may read everyone's (each read written down); the list is theirs unless asked.
    assert carol.get("/eval").json()["runs"] == []
    assert [r["run_id"] for r in carol.get("/eval?everyone=true").json()["runs"]] == [run_id]
    assert carol.get(f"/eval/{run_id}").status_code == 200
    reads = team["agent"].storage.people.admin_reads()
    assert any(r["kind"] == "eval" and r["item"] == run_id for r in reads)


def test_a_set_is_named_never_a_path_on_the_server(team: dict[str, Any], tmp_path: Path) -> None:
    alice = team["clients"]["alice"]
    for name in ("/etc/passwd", "../data/evals", "~", str(tmp_path)):
        refused = alice.post("/eval", json={"set": name})
        assert refused.status_code == 422, refused.text
        assert "name a set, not a path" in refused.json()["detail"]
    missing = alice.post("/eval", json={"set": "simpleqa.csv"})
    assert missing.status_code == 422
    assert "No set named 'simpleqa.csv'" in missing.json()["detail"]
    assert alice.post("/eval", json={}).status_code == 422
    assert alice.post("/eval", json={"set": "demo", "concurrency": 99}).status_code == 422
    # A set placed in <data dir>/eval-sets/ runs by its name.
    sets = team["agent"].settings.data_dir / "eval-sets"
    sets.mkdir(parents=True)
    row = {"id": "q1", "question": QUESTIONS[0].question, "answers": list(QUESTIONS[0].answers)}
    (sets / "mine.jsonl").write_text(json.dumps(row) + "\n")
    with alice.stream("POST", "/eval", json={"set": "mine.jsonl"}) as response:
        received = read_events(response)
    assert received[-1][0] == "done" and received[-1][1]["summary"]["correct"] == 1


def test_a_client_that_goes_away_stops_its_run(team: dict[str, Any]) -> None:
    alice = team["clients"]["alice"]
    team["fake"].delay_s = 0.5  # each reply a moment slow: the run is mid-way when we leave
    # The collector stays off while the run should settle: a run left for it to find stayed
    # "running" for as long as it took (in a long test process, past a minute).
    gc.disable()
    try:
        with alice.stream("POST", "/eval", json={"set": "demo", "limit": 12}) as response:
            lines = response.iter_lines()
            run_id = ""
            for line in lines:
                if line.startswith("data: ") and not run_id:
                    run_id = json.loads(line.removeprefix("data: "))["run_id"]
                if line == "event: question":
                    break  # one question recorded; the client hangs up
        deadline = time.monotonic() + 60
        while (shown := alice.get(f"/eval/{run_id}").json())["status"] == "running":
            assert time.monotonic() < deadline, "the run went on without its reader"
            time.sleep(0.1)
    finally:
        gc.enable()
    assert shown["status"] == "stopped"
    assert 1 <= shown["summary"]["recorded"] < 12
    team["fake"].delay_s = 0.0
    with alice.stream("POST", "/eval", json={"resume": run_id}) as response:
        received = read_events(response)
    assert received[-1][0] == "done" and received[-1][1]["summary"]["recorded"] == 12


def test_eval_sessions_stay_out_of_the_session_list_and_open_from_the_run(
    team: dict[str, Any],
) -> None:
    alice, carol = team["clients"]["alice"], team["clients"]["carol"]
    mine = alice.post("/query", json={"query": "hello", "session_id": "my-talk"})
    assert mine.status_code == 200, mine.text
    with alice.stream("POST", "/eval", json={"set": "demo", "limit": 2}) as response:
        received = read_events(response)
    assert received[-1][0] == "done", received[-1]
    results = alice.get(f"/eval/{received[0][1]['run_id']}").json()["results"]
    eval_sessions = {r["session_id"] for r in results}
    assert len(eval_sessions) == 2 and "my-talk" not in eval_sessions
    # The person's list: their conversation only (an admin's everyone list too).
    assert [s["session_id"] for s in alice.get("/sessions").json()] == ["my-talk"]
    everyone = {s["session_id"] for s in carol.get("/sessions?everyone=true").json()}
    assert everyone == {"my-talk"}
    # Nothing lost: each eval session opens from the run's results with its question.
    for record in results:
        history = alice.get(f"/sessions/{record['session_id']}/history")
        assert history.status_code == 200
        turns = history.json()["turns"]
        assert [(t["user"], t["assistant"]) for t in turns] == [
            (record["question"], record["answer"])
        ]


def test_post_eval_answers_with_the_backend_and_model_it_names(team: dict[str, Any]) -> None:
    alice, fake = team["clients"]["alice"], team["fake"]
    spec = alice.get("/openapi.json").json()
    body = spec["components"]["schemas"]["EvalBody"]["properties"]
    assert body["backend"]["anyOf"][0]["enum"] == ["auto", "ollama", "embedded", "openai"]
    assert "model" in body and "default: the server's own" in body["backend"]["description"]

    unknown = alice.post("/eval", json={"set": "demo", "backend": "llamafile"})
    assert unknown.status_code == 422
    detail = unknown.json()["detail"]
    assert detail.startswith("backend: ") and all(
        f"'{name}'" in detail for name in ("auto", "ollama", "embedded", "openai")
    )

    fake.log.clear()
    chosen = {"set": "demo", "limit": 1, "backend": "openai", "model": "gemma4:12b"}
    with alice.stream("POST", "/eval", json=chosen) as response:
        received = read_events(response)
    assert received[-1][0] == "done", received[-1]
    manifest = received[-1][1]["manifest"]
    assert (manifest["backend"], manifest["model"]) == ("openai", "gemma4:12b")
    assert manifest["grader"]["is_answerer"]  # the server's default: the answering model
    asked = {r.path for r in fake.log if r.method == "POST"}
    assert "/v1/chat/completions" in asked and "/api/chat" not in asked
    # Without a choice, the server's own backend answers.
    with alice.stream("POST", "/eval", json={"set": "demo", "limit": 1}) as response:
        received = read_events(response)
    assert received[-1][1]["manifest"]["backend"] == "ollama"

    # A model the backend cannot give is refused before any run starts.
    runs = len(alice.get("/eval").json()["runs"])
    missing = alice.post("/eval", json={"set": "demo", "backend": "ollama", "model": "nope:1b"})
    assert missing.status_code == 503 and "nope:1b" in missing.json()["detail"]["error"]
    assert len(alice.get("/eval").json()["runs"]) == runs

    resumed = alice.post("/eval", json={"resume": manifest["run_id"], "backend": "ollama"})
    assert resumed.status_code == 422
    assert "answers with the model it started with" in resumed.json()["detail"]
