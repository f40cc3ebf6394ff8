"""People on one server, over the real HTTP API: every endpoint tried crosswise.

Alice and Bob each hold a token (``People.add``); uvicorn serves the API, httpx is the
client, the Ollama-protocol server answers (turns and research alike). Every read or write
Bob aims at Alice's session, turn or research run must answer exactly as an unknown id does
(404, the same body), leave her things as they were, and Alice's own must still work. On
SQLite and on Postgres with a Chroma server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import load_settings
from local2.http.app import create_api
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.conftest import bearer_clients
from tests.http.test_api import Served
from tests.research.test_research_api import read_events

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"


@pytest.fixture(params=["sqlite", "postgres+chroma"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The conversation store and memory: SQLite with embedded Chroma, or the team's
    Postgres with a Chroma server."""
    if request.param == "sqlite":
        return {}
    url = request.getfixturevalue("postgres_url")
    chroma = request.getfixturevalue("chroma_server")
    return {
        "system": {"checkpointer": "postgres", "postgres_url": url},
        "memory": {"chroma_url": chroma.url, "collection": f"people-{tmp_path.name[-12:]}"},
    }


@pytest.fixture
def team(tmp_path: Path, store: dict[str, Any]) -> Iterator[dict[str, Any]]:
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["system"].update(store.get("system", {}))
        overrides["memory"] = {"embedder": "lexical", **store.get("memory", {})}
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        tokens["carol"] = people.add("carol", admin=True)
        with (
            Served(create_api(agent)) as url,
            bearer_clients(url, tokens, timeout=120) as clients,
            httpx.Client(base_url=url, timeout=30) as nobody,
        ):
            clients["nobody"] = nobody
            yield {"agent": agent, "clients": clients, "fake": fake}
        agent.close()


def test_every_cross_read_and_write_answers_as_unknown(team: dict[str, Any]) -> None:
    alice, bob, carol = (team["clients"][n] for n in ("alice", "bob", "carol"))
    asked = alice.post("/query", json={"query": "Where is Kelsby?", "session_id": "alice-1"})
    assert asked.status_code == 200, asked.text
    query_id = asked.json()["query_id"]
    alice.post("/query", json={"query": "And its bridge?", "session_id": "alice-1"})
    with alice.stream(
        "POST", "/research", json={"question": "Why did Kelsby keep its bridge?", "max_rounds": 1}
    ) as response:
        received = read_events(response)
    run_id = received[0][1]["run_id"]
    assert received[-1][0] == "done"
    mine = bob.post("/query", json={"query": "What is a bridge?", "session_id": "bob-1"})
    assert mine.status_code == 200
    before = alice.get("/sessions/alice-1/history").json()
    checkpoint = before["checkpoints"][0]["checkpoint_id"]

    def unknown_like(method: str, path: str, known: str, unknown: str, **body: Any) -> bool:
        """Bob's request on Alice's ``known`` id answers exactly as on an ``unknown`` id."""
        crossed = bob.request(method, path.format(known), **body)
        control = bob.request(
            method,
            path.format(unknown),
            **{k: json.loads(json.dumps(v).replace(known, unknown)) for k, v in body.items()},
        )
        same = crossed.json() == json.loads(json.dumps(control.json()).replace(unknown, known))
        return crossed.status_code == 404 and control.status_code == 404 and same

    session_calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/sessions/{}/history", {}),
        ("POST", "/sessions/{}/replay", {"json": {"checkpoint_id": checkpoint}}),
        ("POST", "/sessions/{}/retry", {"json": {"query_id": query_id}}),
        ("POST", "/sessions/{}/show", {"json": {"query_id": query_id, "attempt": 1}}),
        ("GET", "/sessions/{}/approval", {}),
        ("POST", "/sessions/{}/approval", {"json": {"approve": True}}),
        ("POST", "/sessions/{}/stop", {}),
    ]
    crossings = [
        f"{method} {path}"
        for method, path, body in session_calls
        if not unknown_like(method, path, "alice-1", "nobody-9", **body)
    ]
    feedback = {"session_id": "alice-1", "query_id": query_id, "rating": 1}
    if not unknown_like("POST", "/feedback", "alice-1", "nobody-9", json=feedback):
        crossings.append("POST /feedback")
    # A turn into someone else's session id is refused as "no session": the id is taken
    # (ids the server makes are random; an id a client picks may be anyone's).
    for path in ("/query", "/query/stream"):
        refused = bob.post(path, json={"query": "leak?", "session_id": "alice-1"})
        if refused.status_code != 404 or "alice" in refused.text.replace("alice-1", ""):
            crossings.append(f"POST {path}")
    research_calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/research/{}", {}),
        ("POST", "/research/{}/resume", {}),
        ("POST", "/research/{}/input", {"json": {"approve": True}}),
        ("POST", "/research/{}/steer", {"json": {"text": "skip pricing"}}),
        ("POST", "/research/{}/followup", {"json": {"question": "Why?"}}),
        # the run's references and report leaving the app, in every format (issue 56)
        ("GET", "/research/{}/references", {}),
        *[
            ("GET", "/research/{}/references", {"params": {"format": fmt}})
            for fmt in ("ris", "csl", "md", "html", "pdf", "docx")
        ],
        ("GET", "/research/{}/export", {"params": {"format": "pdf"}}),
    ]
    for method, path, body in research_calls:
        if not unknown_like(method, path, run_id, "nope-run", **body):
            crossings.append(f"{method} {path}")
    listed = {s["session_id"] for s in bob.get("/sessions").json()}
    if "alice-1" in listed:
        crossings.append("GET /sessions")
    if run_id in {r["run_id"] for r in bob.get("/research").json()["runs"]}:
        crossings.append("GET /research")
    assert crossings == [], f"{len(crossings)} cross reads or writes got through: {crossings}"

    # Alice's things are as they were, and still hers to use.
    after = alice.get("/sessions/alice-1/history").json()
    assert [t["user"] for t in after["turns"]] == [t["user"] for t in before["turns"]]
    assert after["turns"][0]["reward"] is None  # Bob's rating did not land
    assert [s["session_id"] for s in alice.get("/sessions").json()] == ["alice-1"]
    rated = alice.post(
        "/feedback", json={"session_id": "alice-1", "query_id": query_id, "rating": 5}
    )
    assert rated.status_code == 200
    # Her own retry and show are hers to ask for (409: her answer needs no retry).
    own = alice.post("/sessions/alice-1/retry", json={"query_id": query_id})
    assert own.status_code in (200, 409), own.text
    assert alice.get("/sessions/alice-1/approval").json()["pending"] is None
    assert alice.get(f"/research/{run_id}").json()["status"] == "done"
    own_pdf = alice.get(f"/research/{run_id}/references", params={"format": "pdf"})
    assert own_pdf.status_code == 200 and own_pdf.content.startswith(b"%PDF-")
    assert [r["run_id"] for r in alice.get("/research").json()["runs"]] == [run_id]
    assert {s["session_id"] for s in bob.get("/sessions").json()} == {"bob-1"}

    # An admin reads everyone's (each read written down) but writes only their own.
    people = team["agent"].storage.people
    assert carol.get("/sessions/alice-1/history").status_code == 200
    assert carol.get(f"/research/{run_id}").status_code == 200
    everyone = {s["session_id"] for s in carol.get("/sessions?everyone=true").json()}
    assert everyone == {"alice-1", "bob-1"}
    assert bob.get("/sessions?everyone=true").json()[0]["session_id"] == "bob-1"  # not admin
    reads = [(r["admin"], r["kind"], r["item"]) for r in people.admin_reads()]
    assert ("carol", "session", "alice-1") in reads and ("carol", "research", run_id) in reads
    denied = carol.post(
        "/feedback", json={"session_id": "alice-1", "query_id": query_id, "rating": 1}
    )
    assert denied.status_code == 404
    asked = carol.post(f"/research/{run_id}/followup", json={"question": "Why?"})
    assert asked.status_code == 404  # an admin asks follow-ups on their own runs only


def test_a_request_must_say_who_it_is_once_people_are_configured(team: dict[str, Any]) -> None:
    nobody = team["clients"]["nobody"]
    assert nobody.get("/sessions").status_code == 401
    assert nobody.get("/health").status_code == 401  # what is served is for people only
    assert nobody.get("/live").json() == {"status": "ok"}  # a health check asks no one
    assert nobody.post("/query", json={"query": "hi"}).status_code == 401
    wrong = nobody.get("/sessions", headers={"Authorization": "Bearer l2_not-a-token"})
    assert wrong.status_code == 401
    # No proxy is trusted: a header naming someone is nobody's word.
    claimed = nobody.get("/sessions", headers={"X-Forwarded-User": "alice"})
    assert claimed.status_code == 401
    people = team["agent"].storage.people
    new = people.rotate("bob")
    assert team["clients"]["bob"].get("/sessions").status_code == 401  # the old token
    assert nobody.get("/sessions", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    people.remove("alice")
    assert team["clients"]["alice"].get("/sessions").status_code == 401
    health = team["clients"]["carol"].get("/health").json()
    assert health["person"] == "carol"
    assert all("l2_" not in str(v) for v in health.values())
