"""The library over the real HTTP API on a team server (uvicorn, httpx, per-person tokens):
a research run keeps what it read in its person's library; each person sees only their own
library, by id and by search (someone else's id answers as an unknown one does); show with
a page, pin, export, import, remove, a document's original, clearing a whole library, and a
run from the library through POST /research."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import load_settings
from local2.http._app import create_api
from local2.library import Fetched, Reader
from local2.service.agent import Agent
from local2_testkit import documents as samples
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.kit.helpers import bearer_clients
from tests.kit.served import Served
from tests.research.helpers import read_events

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "Why did Kelsby keep its harbour swing bridge?"
PDF = "http://mills.example/report.pdf"


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides: dict[str, Any] = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"embedder": "lexical", "enabled": False}
        overrides["files"] = {"embedder": "lexical"}
        overrides["critic"] = {"enabled": False}
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        with Served(create_api(agent)) as url, bearer_clients(url, tokens, timeout=120) as c:
            yield {"agent": agent, "clients": c, "web": web}
        agent.close()


STARTED: list[dict[str, Any]] = []  # each run's first event


def research(client: httpx.Client, **body: Any) -> dict[str, Any]:
    with client.stream(
        "POST", "/research", json={"question": QUESTION, "max_rounds": 1, **body}
    ) as response:
        events = read_events(response)
    STARTED.append(events[0][1])
    assert events[-1][0] == "done", events[-1]
    return dict(events[-1][1])


def test_each_person_sees_only_their_own_library(team: dict[str, Any]) -> None:
    alice, bob = team["clients"]["alice"], team["clients"]["bob"]
    run = research(alice)
    entries = alice.get("/library").json()
    assert entries and {e["url"] for e in entries} <= {s["url"] for s in run["sources"]}
    assert all(e["readings"][0]["run_id"] == run["run_id"] for e in entries)
    assert bob.get("/library").json() == []
    eid = entries[0]["id"]
    unknown = bob.get("/library/lib-000000000000").json()["detail"].replace("lib-000000000000", eid)
    for response in (bob.get(f"/library/{eid}"), bob.delete(f"/library/{eid}")):
        assert response.status_code == 404 and response.json()["detail"] == unknown
    assert bob.post(f"/library/{eid}/pin", json={"pinned": True}).status_code == 404
    hits = alice.get("/library/search", params={"q": "swing bridge vote"}).json()
    assert hits and hits[0]["source"] == "library" and hits[0]["runs"] == [run["run_id"]]
    assert bob.get("/library/search", params={"q": "swing bridge vote"}).json() == []
    shared = alice.get("/search", params={"q": "swing bridge vote", "in": "library"}).json()
    top = shared["hits"][0]  # the own-text search's hit: its source, when and by which run
    assert (top["source"], top["path"], top["page"]) == ("library", hits[0]["path"], None)
    assert top["read_at"] == hits[0]["read_at"] and top["runs"] == [run["run_id"]]
    assert top["entry_id"] == hits[0]["entry_id"] and top["title"] == hits[0]["title"]
    assert {"score", "passage", "why"} <= set(top)
    theirs = bob.get("/search", params={"q": "swing bridge vote", "in": "library"}).json()
    assert theirs["hits"] == []
    shown = alice.get(f"/library/{eid}").json()
    assert shown["entry"]["id"] == eid and shown["text"]
    assert alice.post(f"/library/{eid}/pin", json={"pinned": True}).json()["pinned"]

    exported = alice.get("/library/export")
    assert exported.headers["content-type"] == "application/zip"
    index = json.loads(zipfile.ZipFile(io.BytesIO(exported.content)).read("library.json"))
    assert len(index["entries"]) == len(entries)
    ids = bob.post("/library/import", content=exported.content).json()
    assert len(ids) == len(entries) and not set(ids) & {e["id"] for e in entries}
    assert bob.get("/library/search", params={"q": "swing bridge vote"}).json()

    removed = alice.delete(f"/library/{eid}").json()
    assert removed["id"] == eid and alice.get(f"/library/{eid}").status_code == 404
    assert all(
        h["entry_id"] != eid
        for h in alice.get("/library/search", params={"q": "swing bridge"}).json()
    )
    assert len(bob.get("/library").json()) == len(entries)  # bob's copy is his own

    # a document's original file, to its owner only (someone else's id: as an unknown one)
    data = samples.pdf_of([["The Eling tidal mill report."]], "Mill report")
    fetched = Fetched(PDF, PDF, "Mill report", "pdf", ((1, "The Eling mill."),), data)
    pdf = team["agent"].library.library.keep(fetched, Reader("research", "r9", owner="alice"))
    got = alice.get(f"/library/{pdf['id']}/original")
    assert got.status_code == 200 and got.content == data
    assert got.headers["content-disposition"].startswith('attachment; filename="report.pdf"')
    unknown = bob.get("/library/lib-000000000000/original").json()["detail"]
    theirs = bob.get(f"/library/{pdf['id']}/original")
    assert theirs.status_code == 404
    assert theirs.json()["detail"] == unknown.replace("lib-000000000000", pdf["id"])
    page_only = alice.get(f"/library/{entries[1]['id']}/original")  # a web page: no file
    assert page_only.status_code == 404 and "no original file" in page_only.json()["detail"]

    # clearing a library takes every entry of its person's, and nobody else's
    mine = {e["id"] for e in bob.get("/library").json()}
    assert set(bob.delete("/library").json()) == mine
    assert bob.get("/library").json() == []
    assert bob.get("/library/search", params={"q": "swing bridge vote"}).json() == []
    left = {e["id"] for e in alice.get("/library").json()}
    assert left == {pdf["id"]} | {e["id"] for e in entries[1:]}


def test_research_from_the_library_over_the_api(team: dict[str, Any]) -> None:
    alice = team["clients"]["alice"]
    research(alice)
    web: LoopbackWeb = team["web"]
    before, kept = len(web.hits), alice.get("/library").json()
    run = research(alice, sources="library", keep="off")
    assert len(web.hits) == before and run["sources"]
    # kept off: the run read the kept copies and left no trace (no reading, citation or
    # new last_read)
    assert alice.get("/library").json() == kept
    said = STARTED[-1]["library"]  # the run says where it looks and that it keeps nothing
    assert said["sources"] == "library" and said["keep"] == "off"
    assert said["note"].startswith("Keeping nothing")
    assert all("from your library" in s["title"] for s in run["sources"])
    pages = [s for s in run["sources"] if s["kind"] == "page"]
    assert pages
    for source in pages:  # each names its kept copy, a GET away
        kept = alice.get(source["kept_url"]).json()
        assert kept["entry"]["id"] == source["kept_id"] and kept["entry"]["url"] == source["url"]
    assert (
        alice.post("/research", json={"question": QUESTION, "sources": "nope"}).status_code == 422
    )
