"""People on ``/mcp``: each bearer token sees only its person's documents, runs, sessions and
memories, through the MCP SDK's client; another person's id answers as an unknown one does;
no token or a wrong one is refused before MCP; an MCP session answers only the person who
opened it; and the API's Host and Origin checks hold for ``/mcp`` as for every route."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import typer
from typer.testing import CliRunner

import local2.cli._research as research_cli
from local2.contracts._people import Person
from local2.service.agent import Agent
from local2.storage import list_calls
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.browser import app_served
from tests.kit.mcp_clients import http_session, structured
from tests.mcp.helpers import CORPUS, QUESTION, mcp_agent

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
KEY = "sk-live0123456789abcdefghij"  # a secret in a call's arguments: never in the audit log


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("mcp-people")
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = mcp_agent(fake, web, data)
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        with app_served(agent, ui=False) as url:
            yield {"agent": agent, "url": url, "mcp": f"{url}/mcp", "tokens": tokens}
        agent.close()


def alices_things(team: dict[str, Any]) -> dict[str, Any]:
    """Alice asks, researches, remembers and keeps a document, through MCP."""
    agent: Agent = team["agent"]
    text = "Kelsby bridge ledger\n\fThe toll of the Kelsby bridge paid for its repairs."
    record = agent.documents.add(Person("alice"), "ledger.txt", text.encode())

    async def made() -> dict[str, Any]:
        async with http_session(team["mcp"], team["tokens"]["alice"]) as alice:
            asked = structured(await alice.call_tool("ask", {"question": "Where is Kelsby?"}))
            args = {"question": QUESTION, "max_rounds": 1, "clarify": "never"}
            run = structured(await alice.call_tool("research", args))
            saved = structured(await alice.call_tool("remember", {"text": "Alice's secret: 42."}))
            listed = structured(await alice.call_tool("list_documents", {}))
            runs = structured(await alice.call_tool("list_research_runs", {}))
            page = await alice.read_resource(f"local2://documents/{record['id']}/page/2")
            return {
                "session_id": asked["session_id"],
                "run_id": run["run_id"],
                "engram": saved["id"],
                "listed": listed,
                "runs": runs,
                "page": page,
            }

    made_now = anyio.run(made)
    return {**made_now, "doc_id": record["id"]}


def test_bob_never_sees_alices_documents_runs_or_memories(team: dict[str, Any]) -> None:
    alice = alices_things(team)
    assert [d["id"] for d in alice["listed"]["documents"]] == [alice["doc_id"]]
    assert [r["run_id"] for r in alice["runs"]["runs"]] == [alice["run_id"]]
    assert "toll of the Kelsby bridge" in alice["page"].contents[0].text

    async def bob_tries() -> dict[str, Any]:
        async with http_session(team["mcp"], team["tokens"]["bob"]) as bob:

            async def call(name: str, args: dict[str, Any]) -> Any:
                return await bob.call_tool(name, args)

            async def read(uri: str) -> Any:
                try:
                    await bob.read_resource(uri)
                except Exception as exc:  # the JSON-RPC error
                    return exc
                raise AssertionError(f"bob read {uri}")

            async def subscribe(uri: str) -> Any:
                try:
                    await bob.subscribe_resource(uri)
                except Exception as exc:  # the JSON-RPC error
                    return exc
                raise AssertionError(f"bob subscribed to {uri}")

            unknown_run, unknown_doc = "run-nobodys-0001", "doc-000000000000"
            return {
                "run": await call("research_result", {"run_id": alice["run_id"]}),
                "no_run": await call("research_result", {"run_id": unknown_run}),
                "status": await call("research_status", {"run_id": alice["run_id"]}),
                "input": await call("research_input", {"run_id": alice["run_id"], "stop": True}),
                "doc": await call("read_document", {"document_id": alice["doc_id"]}),
                "no_doc": await call("read_document", {"document_id": unknown_doc}),
                "report": await read(f"local2://research/{alice['run_id']}"),
                "no_report": await read(f"local2://research/{unknown_run}"),
                "page": await read(f"local2://documents/{alice['doc_id']}/page/2"),
                "no_page": await read(f"local2://documents/{unknown_doc}/page/2"),
                "watch": await subscribe(f"local2://research/{alice['run_id']}"),
                "no_watch": await subscribe(f"local2://research/{unknown_run}"),
                "watch_doc": await subscribe(f"local2://documents/{alice['doc_id']}"),
                "no_watch_doc": await subscribe(f"local2://documents/{unknown_doc}"),
                "ask": await call("ask", {"question": "Hi", "session_id": alice["session_id"]}),
                "documents": structured(await call("list_documents", {})),
                "runs": structured(await call("list_research_runs", {})),
                "recall": structured(await call("recall_memory", {"query": "Alice's secret"})),
                "search": structured(await call("search", {"query": "Kelsby bridge toll secret"})),
                "key": await call("read_document", {"document_id": f"doc-{KEY}"}),
                "unknown": (unknown_run, unknown_doc),
            }

    bob = anyio.run(bob_tries)
    unknown_run, unknown_doc = bob["unknown"]

    def said(result: Any, *ids: tuple[str, str]) -> dict[str, Any]:
        assert result.is_error
        words = structured(result)
        for real, stand_in in ids:
            words["error"] = words["error"].replace(real, stand_in)
        return words

    as_unknown = (alice["run_id"], unknown_run)
    assert said(bob["run"], as_unknown) == said(bob["no_run"])
    assert said(bob["status"], as_unknown) == said(bob["no_run"])
    assert said(bob["input"], as_unknown) == said(bob["no_run"])
    assert said(bob["doc"], (alice["doc_id"], unknown_doc)) == said(bob["no_doc"])
    for mine, nobodys, real, stand_in in (
        ("report", "no_report", alice["run_id"], unknown_run),
        ("page", "no_page", alice["doc_id"], unknown_doc),
        ("watch", "no_watch", alice["run_id"], unknown_run),
        ("watch_doc", "no_watch_doc", alice["doc_id"], unknown_doc),
    ):
        error, unknown = bob[mine].error, bob[nobodys].error
        assert error.code == unknown.code == -32002
        assert error.message.replace(real, stand_in) == unknown.message
    assert bob["ask"].is_error and structured(bob["ask"])["status"] == 404
    assert bob["documents"] == {"documents": []} and bob["runs"] == {"runs": []}
    assert all(m["id"] != alice["engram"] for m in bob["recall"]["memories"])
    assert all("Alice" not in h["passage"] for h in bob["search"]["hits"])
    assert all(h["source"] != "documents" for h in bob["search"]["hits"])
    agent: Agent = team["agent"]
    assert agent.research.payload(alice["run_id"], Person("alice"))["status"] == "done"
    assert agent.access.session_owner(alice["session_id"]) == "alice"
    assert agent.turns.wait_idle(60)
    audit = agent.settings.data_dir / "runs" / alice["session_id"]
    records = [json.loads(p.read_text()) for p in audit.glob("*.json")]
    assert [r["owner"] for r in records] == ["alice"]  # the audit log names its caller
    audited_with_their_callers(team, alice)


def audited_with_their_callers(team: dict[str, Any], alice: dict[str, Any]) -> None:
    """Every MCP call in the audit log under the name of the person who made it, reads
    too, arguments without secrets; alice's run in her research list (API and CLI) only."""
    agent: Agent = team["agent"]
    calls = list_calls(agent.settings)
    made = {(c["person"], c["method"], c["name"]) for c in calls}
    assert {c["transport"] for c in calls} == {"http"}
    for name in ("ask", "research", "remember", "list_documents", "list_research_runs"):
        assert ("alice", "tools/call", name) in made, name
    page_uri = f"local2://documents/{alice['doc_id']}/page/2"
    assert ("alice", "resources/read", page_uri) in made
    for name in ("research_result", "read_document", "recall_memory", "search", "ask"):
        assert ("bob", "tools/call", name) in made, name
    asked = next(c for c in calls if c["person"] == "alice" and c["name"] == "ask")
    assert asked["outcome"] == "answered" and asked["ids"]["session_id"] == alice["session_id"]
    assert asked["arguments"] == {"question": "Where is Kelsby?"}
    run = next(c for c in calls if c["person"] == "alice" and c["name"] == "research")
    assert run["ids"] == {"run_id": alice["run_id"]}
    bobs = [c for c in calls if c["person"] == "bob"]
    refused = next(c for c in bobs if c["name"] == "research_result")
    assert refused["outcome"] == "refused" and "No research run" in refused["error"]
    assert any(c["method"] == "resources/read" and c["outcome"] == "refused" for c in bobs)
    assert KEY not in json.dumps(calls)
    assert any("[REDACTED]" in str(c["arguments"].get("document_id")) for c in bobs)
    assert list_calls(agent.settings, "bob") == bobs
    with httpx.Client(base_url=team["url"], timeout=30) as client:
        for name, listed in (("alice", [alice["run_id"]]), ("bob", [])):
            token = {"Authorization": f"Bearer {team['tokens'][name]}"}
            runs = client.get("/research", headers=token).json()["runs"]
            assert [r["run_id"] for r in runs] == listed, name
    cli = typer.Typer()
    cli.callback()(lambda: None)
    research_cli.register(cli)
    shown = CliRunner().invoke(
        cli,
        ["research", "list", "--json"],
        obj={"settings": agent.settings, "person": Person("alice")},
    )
    assert shown.exit_code == 0, shown.output
    assert [r["run_id"] for r in json.loads(shown.output)] == [alice["run_id"]]


def test_missing_or_wrong_token_is_refused(team: dict[str, Any]) -> None:
    with httpx.Client(base_url=team["url"], timeout=30, headers=MCP_HEADERS) as client:
        for headers in ({}, {"Authorization": "Bearer nobodys-token"}):
            refused = client.post("/mcp", json=INITIALIZE, headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"].startswith('Bearer realm="LoCAL2", ')
            assert refused.json()["detail"] == "missing or wrong bearer token"
            assert client.get("/mcp", headers=headers).status_code == 401

    async def without_token() -> None:
        async with http_session(team["mcp"]):
            raise AssertionError("a session opened without a token")

    with pytest.raises(Exception):  # noqa: B017 - the SDK's error for a 401, whichever
        anyio.run(without_token)


def test_an_mcp_session_answers_only_the_person_who_opened_it(team: dict[str, Any]) -> None:
    alice, bob = (f"Bearer {team['tokens'][n]}" for n in ("alice", "bob"))
    with httpx.Client(base_url=team["url"], timeout=30, headers=MCP_HEADERS) as client:
        opened = client.post("/mcp", json=INITIALIZE, headers={"Authorization": alice})
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        for who, status in ((bob, 404), (alice, 200)):
            headers = {"Authorization": who, "Mcp-Session-Id": session}
            headers["Mcp-Protocol-Version"] = "2025-06-18"
            answer = client.post("/mcp", json=listing, headers=headers)
            assert answer.status_code == status, answer.text


def test_host_and_origin_are_checked_as_the_api_checks_them(team: dict[str, Any]) -> None:
    token = {"Authorization": f"Bearer {team['tokens']['alice']}"}
    with httpx.Client(base_url=team["url"], timeout=30, headers=MCP_HEADERS) as client:
        rebinding = client.post("/mcp", json=INITIALIZE, headers={**token, "Host": "evil.example"})
        assert rebinding.status_code == 403 and "not served here" in rebinding.json()["detail"]
        foreign = {**token, "Origin": "https://evil.example"}
        cross_site = client.post("/mcp", json=INITIALIZE, headers=foreign)
        assert cross_site.status_code == 403 and "may not change" in cross_site.json()["detail"]
        own = client.post("/mcp", json=INITIALIZE, headers={**token, "Origin": team["url"]})
        assert own.status_code == 200, own.text
        api = client.post("/query", json={"query": "x"}, headers=foreign)
        assert api.status_code == 403  # the same guard as the API's routes
        # Every /mcp request, a GET's event stream too (DNS rebinding): the MCP spec's ask.
        session = {**token, "Mcp-Session-Id": own.headers["mcp-session-id"]}
        for method in ("GET", "DELETE"):  # streamed: a GET let through would never end
            with client.stream(method, "/mcp", headers={**session, **foreign}) as refused:
                assert refused.status_code == 403, method
                detail = json.loads(refused.read())["detail"]
            said = "may not reach /mcp" if method == "GET" else "may not change anything"
            assert said in detail and "cors_origins" in detail
        assert client.get("/research", headers=foreign).status_code == 200  # a read elsewhere


def test_documents_belong_to_their_person(tmp_path: Path) -> None:
    """A check of the fixture's own premise: the desk keeps Alice's document hers."""
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = mcp_agent(fake, web, tmp_path)
        try:
            record = agent.documents.add(Person("alice"), "a.txt", b"alpha")
            assert agent.documents.records(Person("bob")) == []
            assert agent.documents.records(Person("alice"))[0]["id"] == record["id"]
        finally:
            agent.close()
