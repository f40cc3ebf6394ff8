"""``POST /research`` (server-sent events, ending with ``done`` and the payload) and
``GET /research/{run_id}`` over a real socket: uvicorn serving the API, httpx streaming,
the fake Ollama and web."""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path
from typing import Any

import httpx

from local2.http._app import create_api
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.served import Served
from tests.research.helpers import CORPUS, read_events, research_agent


def post_events(client: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """POST ``body`` and read the answer's server-sent events (a 200 stream)."""
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        return read_events(response)


def test_post_research_streams_events_then_the_payload(tmp_path: Path) -> None:
    brain = ResearchBrain(extra=["Kelsby also has a castle [42]."])
    with FakeOllama(brain) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
            with client.stream(
                "POST",
                "/research",
                json={"question": "Why did Kelsby keep its bridge?", "max_rounds": 1},
            ) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                received = read_events(response)
            names = [n for n, _ in received]
            assert names[0] == "run" and names[-1] == "done"
            assert names.index("research.plan") < names.index("research.step")
            assert "tool.request.web_search" in names and "research.report" in names
            assert names.index("report") < names.index("critique.result")
            payload = received[-1][1]
            run_id = received[0][1]["run_id"]
            assert payload["run_id"] == run_id and payload["status"] == "done"
            unsupported = [u["sentence"] for u in payload["unsupported"]]
            assert "Kelsby also has a castle [42]." in unsupported

            stored = client.get(f"/research/{run_id}").json()
            assert stored["report"] == payload["report"] and stored["status"] == "done"
            assert client.get("/research").json()["runs"][0]["run_id"] == run_id
            assert client.get("/research/nope").status_code == 404
            assert client.get("/research/bad%20id").status_code == 422
            assert client.post("/research", json={"question": " "}).status_code == 422
            extra = client.post("/research", json={"question": "q", "rounds": 2})
            assert extra.status_code == 422
        agent.close()


def test_a_paused_run_over_http(tmp_path: Path) -> None:
    """The plan under review: the stream ends with ``awaiting_input``, ``GET`` shows the
    same, a broken plan answers 422 and changes nothing, an approval streams the rest; a say
    to a run that is not running answers 409; a follow-up streams its answer."""
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
            body = {"question": "Why did Kelsby keep its bridge?", "max_rounds": 1, "review": True}
            with client.stream("POST", "/research", json=body) as response:
                received = read_events(response)
            names = [n for n, _ in received]
            assert names[-1] == "awaiting_input" and "done" not in names
            waiting = received[-1][1]
            run_id = waiting["run_id"]
            assert (
                waiting["waits_for"] == "plan" and waiting["resume"] == f"/research/{run_id}/input"
            )
            assert [q["id"] for q in waiting["subquestions"]] == ["q1"]
            shown = client.get(f"/research/{run_id}").json()
            assert shown["status"] == "awaiting_input"
            assert shown["awaiting"]["subquestions"] == waiting["subquestions"]

            broken = client.post(f"/research/{run_id}/input", json={"plan": {"subquestions": []}})
            assert broken.status_code == 422
            assert "no sub-question is left" in broken.json()["detail"]
            assert "the run stays paused" in broken.json()["detail"]
            shape = client.post(f"/research/{run_id}/input", json={"approve": True, "answer": "x"})
            assert shape.status_code == 422  # one of approve, plan, answer
            assert client.get(f"/research/{run_id}").json()["status"] == "awaiting_input"
            steer = client.post(f"/research/{run_id}/steer", json={"text": "skip pricing"})
            assert steer.status_code == 409
            assert f"waits for input: POST /research/{run_id}/input" in steer.json()["detail"]
            assert web.hits == []

            rest = post_events(client, f"/research/{run_id}/input", {"approve": True})
            assert rest[-1][0] == "done" and rest[-1][1]["status"] == "done"
            assert "research.input" in [n for n, _ in rest]
            assert client.get(f"/research/{run_id}").json()["awaiting"] is None

            with client.stream(
                "POST", f"/research/{run_id}/followup", json={"question": "Why was there a vote?"}
            ) as response:
                asked = read_events(response)
            answer = next(data for name, data in asked if name == "followup")
            assert answer["n"] == 1 and answer["answer"].startswith("# Why was there a vote?")
            assert asked[-1][0] == "done" and len(asked[-1][1]["followups"]) == 1
            missing = client.post("/research/nope/followup", json={"question": "Why?"})
            assert missing.status_code == 404
        agent.close()


def test_the_plan_shown_round_trips_edited(tmp_path: Path) -> None:
    """The plan ``GET /research/{id}`` shows under ``awaiting`` is sent back edited as
    ``{goal, steps}``, with the fields the server added (branch, status) still in it: it is
    accepted, and the run searches and reads exactly as edited; /openapi.json shows the
    shape with an example."""
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
            body = {"question": "Why did Kelsby keep its bridge?", "max_rounds": 1, "review": True}
            with client.stream("POST", "/research", json=body) as response:
                run_id = read_events(response)[-1][1]["run_id"]
            shown = client.get(f"/research/{run_id}").json()["awaiting"]
            steps = [dict(s) for s in shown["steps"]]
            assert {"branch", "status"} <= set(steps[0])  # what the server adds, kept as shown
            search = next(s for s in steps if s["tool"] == "web_search")
            search["args"] = {**search["args"], "query": "tide mill Europe"}
            reader = next(s for s in steps if s["tool"] == "web_fetch")
            reader["description"] = "Read what the tide mill search found"
            plan = {"goal": shown["goal"] + " (edited)", "steps": steps}
            rest = post_events(client, f"/research/{run_id}/input", {"plan": plan})
            payload = rest[-1][1]
            assert rest[-1][0] == "done" and payload["status"] == "done"
            assert web.searches() == ["tide mill Europe"]  # as edited, and nothing else
            assert "06_tidal_mill" in web.pages_served()  # its results read
            ran = [(s["tool"], s["description"], s["status"]) for s in payload["steps"]]
            assert ("web_fetch", "Read what the tide mill search found", "done") in ran
            assert payload["goal"].endswith("(edited)")
            assert [p["origin"] for p in payload["plan"]] == ["model", "person"]
            openapi = client.get("/openapi.json").json()
        agent.close()
    schemas = openapi["components"]["schemas"]
    step = schemas["PlanStepEdit"]["properties"]
    assert {"id", "tool", "args", "requires", "branch", "status"} <= set(step)
    examples = schemas["PlanEdit"]["examples"]
    assert any("steps" in e and "branch" in e["steps"][0] for e in examples)


def test_a_plan_step_with_an_unknown_field_is_still_refused() -> None:
    from pydantic import ValidationError

    from local2.contracts._research_input import PlanEdit

    step = {"id": "s1", "tool": "web_search", "args": {"query": "x"}, "requries": []}
    try:
        PlanEdit.model_validate({"steps": [step]})
    except ValidationError as exc:
        assert "requries" in str(exc)
    else:
        raise AssertionError("a misspelt field was accepted")
    shown = {**step, "branch": "q1", "status": "pending"}
    del shown["requries"]
    edit = PlanEdit.model_validate({"steps": [shown]})
    assert edit.steps is not None and edit.steps[0].planned() == {
        "id": "s1",
        "description": "",
        "tool": "web_search",
        "args": {"query": "x"},
        "requires": [],
    }
    assert PlanEdit.from_text('{"goal": "g", "steps": [' + json.dumps(shown) + "]}").steps


def test_stop_on_a_paused_run_over_http(tmp_path: Path) -> None:
    """A paused run is stopped by the Stop of a running run (``steer {stop: "run"}``, 202
    once its report is written) or by answering its pause ``{stop: true}`` (the rest as
    events): each ends ``stopped``, says why, and is never resumed into a search."""
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
            body = {"question": "Why did Kelsby keep its bridge?", "max_rounds": 1, "review": True}
            paused = []
            for _ in range(2):
                with client.stream("POST", "/research", json=body) as response:
                    paused.append(read_events(response)[-1][1]["run_id"])
            by_say, by_input = paused

            said = client.post(f"/research/{by_say}/steer", json={"stop": "run"})
            assert said.status_code == 202, said.text
            assert said.json()["kind"] == "stop"
            rest = post_events(client, f"/research/{by_input}/input", {"stop": True})
            assert rest[-1][0] == "done" and rest[-1][1]["status"] == "stopped"
            assert "awaiting_input" not in [n for n, _ in rest]

            for run_id in paused:
                shown = client.get(f"/research/{run_id}").json()
                assert shown["status"] == "stopped" and shown["awaiting"] is None
                assert shown["stopped"] == "the person stopped the run"
                assert "stopped the run before anything was searched or read" in shown["report"]
                with client.stream("POST", f"/research/{run_id}/resume") as response:
                    again = read_events(response)
                assert [n for n, _ in again] == ["run", "done"]
                late = client.post(f"/research/{run_id}/input", json={"approve": True})
                assert late.status_code == 409 and "waits for no input" in late.json()["detail"]
            listed = {r["run_id"]: r["status"] for r in client.get("/research").json()["runs"]}
            assert listed == {by_say: "stopped", by_input: "stopped"}
        agent.close()
    assert web.hits == []


def test_a_client_that_hangs_up_leaves_its_run_to_resume_at_once(tmp_path: Path) -> None:
    """The client goes away after the first step starts: the run lets go of itself then
    (unfinished, its claim released), so a resume goes on from its last finished
    step. The collector stays off: a run left for it to find stayed claimed ("already
    running") for as long as it took."""
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        web.search_delay_s = 0.5  # the run is in its first step when the client leaves
        agent = research_agent(fake, web, tmp_path)
        question = {"question": "Why did Kelsby keep its bridge?", "max_rounds": 1}
        gc.disable()
        try:
            with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=60) as client:
                with client.stream("POST", "/research", json=question) as response:
                    run_id = ""
                    for line in response.iter_lines():
                        if line.startswith("data: ") and not run_id:
                            run_id = json.loads(line.removeprefix("data: "))["run_id"]
                        if line == "event: research.step":
                            break  # the first step started; the client hangs up
                deadline = time.monotonic() + 60
                while (shown := client.get(f"/research/{run_id}").json())["status"] == "running":
                    assert time.monotonic() < deadline, "the run stayed claimed without a reader"
                    time.sleep(0.1)
                assert shown["status"] == "unfinished"  # resumable: not running, not done
                resumed = post_events(client, f"/research/{run_id}/resume", {})
        finally:
            gc.enable()
        agent.close()
    assert resumed[-1][0] == "done" and resumed[-1][1]["status"] == "done"
    assert resumed[-1][1]["report"]
