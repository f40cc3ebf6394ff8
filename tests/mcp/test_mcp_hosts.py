"""LoCAL2's MCP server from the clients hosts are built on, as the dev setup installed them
(``local2_testkit.mcp_hosts``): the TypeScript SDK's client (Claude Desktop, Claude Code,
Cursor, VS Code and the Inspector embed it) against ``local2 mcp`` started from what
``--print-config`` printed, with a minimal environment, and against ``/mcp`` with a token
(the scheme in lower case too); and langchain-mcp-adapters loading and calling the tools.
What each must get: the tools, a search, a refusal in the server's own words (the TS SDK
drops a refusal whose structured content breaks the tool's output schema), a prompt's
missing argument as -32602, ``resources/list`` then ``resources/read``, a 401 that says
the token is a static one; and no dependency's DEBUG lines on the server's stderr. A host
that listed resources is told when the listing changes, and one subscribed to a research
report is told each time it changes until the run has ended, over stdio and ``/mcp``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import load_settings
from local2.contracts._people import LOCAL, Person
from local2.service.agent import Agent
from local2_testkit.mcp_hosts import langchain_client, ts_client, ts_sdk_version
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.kit.browser import app_served
from tests.kit.mcp_clients import write_config
from tests.mcp.helpers import CORPUS, QUESTION

LEDGER = "Kelsby bridge ledger\n\fThe toll of the Kelsby bridge paid for its repairs."
STEPS: list[dict[str, Any]] = [
    {"op": "listTools"},
    {"op": "callTool", "name": "search", "arguments": {"query": "toll", "within": ["documents"]}},
    {"op": "callTool", "name": "search", "arguments": {}},
    {"op": "callTool", "name": "research_result", "arguments": {"run_id": "nope"}},
    {"op": "getPrompt", "name": "research_this", "arguments": {}},
    {"op": "getPrompt", "name": "nope", "arguments": {}},
    {"op": "listResources"},
    {"op": "readListed"},
]


@pytest.fixture(scope="module")
def person_setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A person's LoCAL2 as they run it: data in LOCAL2_HOME, settings in LOCAL2_CONFIG,
    the model server at OLLAMA_HOST (none of them in the config files), a document kept."""
    base = tmp_path_factory.mktemp("mcp-hosts")
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides = research_overrides(web, base / "unused")
        del overrides["system"]  # the data directory comes from LOCAL2_HOME
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"embedder": "lexical"}
        config = write_config(base / "config", overrides)
        env = {"LOCAL2_HOME": str(base / "home"), "LOCAL2_CONFIG": str(config)}
        env["OLLAMA_HOST"] = fake.url
        settings = load_settings(config, overrides={"system": {"data_dir": env["LOCAL2_HOME"]}})
        settings.system.ollama_host = fake.url
        agent = Agent(settings, backend="ollama")
        record = agent.documents.add(LOCAL, "ledger.txt", LEDGER.encode())
        yield {"env": env, "agent": agent, "document": record, "fake": fake}
        agent.close()


def printed(env: dict[str, str], host: str) -> dict[str, Any]:
    """``local2 mcp --print-config --host HOST`` run in the person's environment."""
    command = [sys.executable, "-m", "local2.cli", "mcp", "--print-config", "--host", host]
    shown = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=True, env={**os.environ, **env}
    )
    assert shown.stderr == ""
    block: dict[str, Any] = json.loads(shown.stdout[shown.stdout.index("{") :])
    return block


def results(found: dict[str, Any]) -> list[Any]:
    assert found["connected"], found.get("error")
    return [step.get("ok", step.get("error")) for step in found["steps"]]


def check_steps(got: list[Any], document_id: str) -> None:
    """What every host must see for :data:`STEPS`."""
    tools, hit, refused, unknown, no_argument, no_prompt, listed, read = got
    assert "search" in {t["name"] for t in tools["tools"]}
    assert "The toll of the Kelsby bridge" in hit["structuredContent"]["hits"][0]["passage"]
    said = json.loads(refused["content"][0]["text"])  # the server's words, not the SDK's
    assert refused["isError"] and "structuredContent" not in refused
    assert said["error"] == "query: Field required" and said["fix"] and said["status"] == 422
    unknown_said = json.loads(unknown["content"][0]["text"])
    assert unknown["isError"] and "list_research_runs" in unknown_said["fix"]
    assert no_argument["code"] == -32602 and "needs the argument question" in no_argument["message"]
    assert no_argument["data"]["fix"]
    assert no_prompt["code"] == -32602 and no_prompt["data"]["error"] == "No prompt 'nope' here."
    uris = [r["uri"] for r in listed["resources"]]
    assert f"local2://documents/{document_id}" in uris and "nextCursor" not in listed
    assert all(r["mimeType"] and r["name"] for r in listed["resources"])
    texts = [contents["text"] for each in read for contents in each["contents"]]
    assert any("The toll of the Kelsby bridge" in text for text in texts)


def test_the_typescript_sdk_over_stdio_from_the_printed_config(
    person_setup: dict[str, Any],
) -> None:
    """Claude Code's block, started as a host starts it: the printed command, arguments and
    env, and nothing else of the person's environment."""
    entry = printed(person_setup["env"], "claude-code")["mcpServers"]["local2"]
    assert Path(entry["command"]).is_absolute() and entry["type"] == "stdio"
    assert entry["env"] == {
        **person_setup["env"],
        "LOCAL2_HOME": person_setup["env"]["LOCAL2_HOME"],
    }
    plan = {"stdio": {"command": entry["command"], "args": entry["args"], "env": entry["env"]}}
    research = {"question": QUESTION, "max_rounds": 1, "clarify": "never"}
    watch = {"question": QUESTION, "schedule": "every Monday 07:00", "timezone": "Europe/Berlin"}
    plan["steps"] = [
        *STEPS,
        {"op": "callTool", "name": "research", "arguments": research},
        {"op": "callTool", "name": "add_watch", "arguments": watch},
        {"op": "callTool", "name": "add_watch", "arguments": {**watch, "schedule": "61 7 * * *"}},
        {"op": "callTool", "name": "list_watches", "arguments": {}},
    ]
    found = ts_client(plan)
    *got, researched, watched, refused, watches = results(found)
    check_steps(got, person_setup["document"]["id"])
    assert researched["structuredContent"]["status"] == "done"  # BM25 ranked what was read
    # A watch's structured content passes the SDK's check against the output schema.
    assert watched["structuredContent"]["timezone"] == "Europe/Berlin", watched
    said = json.loads(refused["content"][0]["text"])
    assert refused["isError"] and said["status"] == 422 and "e.g." in said["fix"], said
    assert watches["structuredContent"]["watches"] == [watched["structuredContent"]]
    assert "DEBUG" not in found["stderr"] and "Building index" not in found["stderr"]
    assert ts_sdk_version() == "1.32.2"


def test_a_session_that_listed_resources_is_told_when_they_change(
    person_setup: dict[str, Any], tmp_path: Path
) -> None:
    """Over stdio from the printed config: the capability is declared; a document added by
    another process on the same data directory, then a research run finished by the
    session's own ``research`` call, each come as notifications/resources/list_changed, and
    the next listing has them."""
    entry = printed(person_setup["env"], "claude-code")["mcpServers"]["local2"]
    signal = tmp_path / "waiting"
    wait = {"op": "waitResourcesChanged", "signal": str(signal), "timeoutMs": 15_000}
    research = {"question": QUESTION, "max_rounds": 1, "clarify": "never"}
    steps = [
        {"op": "listResources"},
        wait,
        {"op": "listResources"},
        {"op": "callTool", "name": "research", "arguments": research},
        wait,
        {"op": "listResources"},
    ]
    plan = {"stdio": {"command": entry["command"], "args": entry["args"], "env": entry["env"]}}
    added: dict[str, Any] = {}

    def add_once_it_listens() -> None:
        for _ in range(1200):
            if signal.exists():
                agent: Agent = person_setup["agent"]
                added.update(agent.documents.add(LOCAL, "tides.txt", b"Spring tides at Kelsby."))
                return
            time.sleep(0.1)

    adder = threading.Thread(target=add_once_it_listens)
    adder.start()
    try:
        found = ts_client({**plan, "steps": steps})
    finally:
        adder.join()
    before, told, with_document, researched, told_again, with_report = results(found)
    assert found["capabilities"]["resources"]["listChanged"] is True
    uris = [[r["uri"] for r in listed["resources"]] for listed in (before, with_document)]
    document = f"local2://documents/{added['id']}"
    assert document not in uris[0] and document in uris[1], uris
    assert "told" in told, (told, found["stderr"][-3000:])
    assert told["told"] >= 1 and told_again["told"] > told["told"], (told, told_again)
    run_id = researched["structuredContent"]["run_id"]
    assert f"local2://research/{run_id}" in [r["uri"] for r in with_report["resources"]]


PAUSED = {"question": QUESTION, "max_rounds": 1, "clarify": "never", "review": True}
FOLLOWED: list[dict[str, Any]] = [  # a report subscribed to while its run waits, then followed
    {"op": "callTool", "name": "research", "arguments": PAUSED},
    {"op": "subscribe", "uri": "$resource"},
    {"op": "readResource", "uri": "$resource"},
    {"op": "subscribe", "uri": "local2://research/nope"},
    {"op": "subscribe", "uri": "https://example.org/nope"},
    {"op": "subscribe", "uri": "local2://research/a b"},
    {
        "op": "callTool",
        "name": "research_input",
        "arguments": {"run_id": "$run_id", "approve": True},
    },
    {"op": "followUpdates", "uri": "$resource", "whileText": "No report yet", "timeoutMs": 30_000},
    {"op": "unsubscribe", "uri": "$resource"},
]


def check_followed(got: list[Any]) -> str:
    """What a host subscribed to a running report sees (:data:`FOLLOWED`); its run's id."""
    paused, subscribed, read_paused, unknown, foreign, malformed, approved, *rest = got
    followed, unsubscribed = rest
    run_id = paused["structuredContent"]["run_id"]
    assert paused["structuredContent"]["status"] == "awaiting_input", paused
    assert subscribed == {} and unsubscribed == {}
    assert "No report yet: the run is awaiting_input" in read_paused["contents"][0]["text"]
    assert unknown["code"] == -32002 and unknown["data"]["error"] == "No research run 'nope'."
    assert "list_research_runs" in unknown["data"]["fix"]
    assert foreign["code"] == -32002 and "resources/list" in foreign["data"]["fix"], foreign
    assert malformed["code"] == -32602 and "Invalid run id 'a b'" in malformed["data"]["error"]
    assert "resources/list" in malformed["data"]["fix"], malformed
    assert approved["structuredContent"]["status"] == "done", approved
    assert followed["updates"] >= 1, followed
    *before, report = followed["texts"]
    assert all("No report yet" in text for text in before)
    assert report == approved["structuredContent"]["report"] and "[1]" in report
    return str(run_id)


def test_a_host_subscribed_to_a_running_report_hears_it_until_it_is_done(
    person_setup: dict[str, Any],
) -> None:
    """Over stdio from the printed config: ``resources.subscribe`` is declared; a report
    subscribed to while its run waits for its plan's review is told as updated when the run
    goes on, until it is done, and then reads as the finished report; an unknown run and a
    URI that is not LoCAL2's are -32002 in plain words."""
    entry = printed(person_setup["env"], "claude-code")["mcpServers"]["local2"]
    plan = {"stdio": {"command": entry["command"], "args": entry["args"], "env": entry["env"]}}
    found = ts_client({**plan, "steps": FOLLOWED})
    assert found["capabilities"]["resources"]["subscribe"] is True
    check_followed(results(found))
    assert "Traceback" not in found["stderr"] and "ERROR" not in found["stderr"]


@pytest.fixture(scope="module")
def team(person_setup: dict[str, Any]) -> Iterator[dict[str, Any]]:
    agent: Agent = person_setup["agent"]
    people = agent.storage.people
    assert people is not None
    token = people.add("carol")
    agent.documents.add(Person("carol"), "ledger.txt", LEDGER.encode())
    with app_served(agent, ui=False) as url:
        yield {"url": url, "token": token, "agent": agent}


def test_the_typescript_sdk_over_http_with_a_token_in_any_case(team: dict[str, Any]) -> None:
    carol = team["agent"].documents.records(Person("carol"))[0]["id"]
    for scheme in ("Bearer", "bearer"):
        headers = {"Authorization": f"{scheme} {team['token']}"}
        found = ts_client(
            {"http": {"url": f"{team['url']}/mcp", "headers": headers}, "steps": STEPS}
        )
        check_steps(results(found), carol)
    with httpx.Client(base_url=team["url"], timeout=30) as client:  # the API too
        assert client.get(
            "/documents", headers={"Authorization": f"BEARER {team['token']}"}
        ).is_success


def test_over_http_a_host_hears_its_listing_change_and_its_report_updated(
    team: dict[str, Any],
) -> None:
    """``/mcp`` with a token, through the TypeScript SDK's StreamableHTTPClientTransport
    (its event stream): the same report followed to its end as over stdio, and the listing
    changed by the run's finishing (someone else's run is as unknown as none: in
    tests/mcp/test_mcp_people.py)."""
    told_of = {"op": "waitResourcesChanged", "timeoutMs": 15_000}
    steps = [{"op": "listResources"}, *FOLLOWED, told_of, {"op": "listResources"}]
    headers = {"Authorization": f"Bearer {team['token']}"}
    found = ts_client({"http": {"url": f"{team['url']}/mcp", "headers": headers}, "steps": steps})
    listed_before, *followed, told, listed_after = results(found)
    assert found["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    run_id = check_followed(followed)
    report = f"local2://research/{run_id}"
    assert report not in [r["uri"] for r in listed_before["resources"]]
    assert told["told"] >= 1 and report in [r["uri"] for r in listed_after["resources"]]


def test_a_host_without_a_token_is_told_it_is_a_static_one(team: dict[str, Any]) -> None:
    found = ts_client({"http": {"url": f"{team['url']}/mcp", "headers": {}}, "steps": STEPS})
    assert not found["connected"] and "static bearer token, not an OAuth sign-in" in found["error"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=team["url"], timeout=30, headers=accept) as client:
        none = client.post("/mcp", json=init)
        wrong = client.post("/mcp", json=init, headers={"Authorization": "bearer nobodys"})
        api = client.get("/documents")
    for refused in (none, wrong, api):
        challenge = refused.headers["www-authenticate"]
        assert refused.status_code == 401 and challenge.startswith('Bearer realm="LoCAL2", ')
        assert 'error_description="This server takes a static bearer token' in challenge
    assert "invalid_token" in wrong.headers["www-authenticate"]
    assert "error=" not in none.headers["www-authenticate"]
    assert "local2 mcp --print-config" in none.json()["fix"]


def test_langchain_adapters_load_and_call_search_and_ask(person_setup: dict[str, Any]) -> None:
    entry = printed(person_setup["env"], "cursor")["mcpServers"]["local2"]
    calls = [
        {"tool": "search", "arguments": {"query": "toll", "within": ["documents"]}},
        {"tool": "ask", "arguments": {"question": "Where is Kelsby?"}},
        {"tool": "research_status", "arguments": {"run_id": "nope"}},
    ]
    plan = {"command": entry["command"], "args": entry["args"], "env": entry["env"], "calls": calls}
    found = langchain_client(plan)
    assert {"ask", "search", "research", "remember"} <= set(found["tools"])
    searched, asked, unknown = found["calls"]
    assert "The toll of the Kelsby bridge" in json.dumps(searched["content"])
    answered = (
        json.loads(asked["content"][0]["text"]) if isinstance(asked["content"], list) else asked
    )
    assert "answer" in json.dumps(answered) and "error" not in asked
    said = json.loads(unknown.get("error") or unknown["content"][0]["text"])  # the server's words
    assert said["error"] == "No research run 'nope'." and "list_research_runs" in said["fix"]
