"""``/openapi.json`` documents the payloads the API really returns, and every LoCAL2 error
reaches a client as one status and body shape, whichever route raised it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import BaseMessage

from local2.errors import (
    AwaitingApproval,
    CannotRetry,
    InvalidQuery,
    ModelError,
    ModelUnavailable,
    StorageFull,
    StorageUnavailable,
    UnknownTurn,
)
from local2.http._app import create_api
from local2.http._errors import detail_of
from local2.models._scripted import ScriptedChatModel, reply
from local2.service import status_of
from local2.service.agent import Agent
from tests.kit.helpers import make_settings
from tests.kit.served import Served


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        return spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return schema


def success_schema(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    response = spec["paths"][path][method]["responses"]["200"]
    return resolve(spec, response["content"]["application/json"]["schema"])


def fields(spec: dict[str, Any], method: str, path: str) -> set[str]:
    return set(success_schema(spec, method, path)["properties"])


def test_openapi_documents_the_payloads_that_are_returned(tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[reply("Kelsby is a town.", thinking="recall")])
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
        spec = client.get("/openapi.json").json()
        turn = client.post("/query", json={"query": "Where is Kelsby?", "session_id": "s1"})
        agent.turns.wait_idle(30)  # the turn has ended: its last checkpoint is saved
        history = client.get("/sessions/s1/history").json()
        rated = client.post(
            "/feedback", json={"session_id": "s1", "query_id": turn.json()["query_id"], "rating": 4}
        ).json()
    documented = fields(spec, "post", "/query")
    assert {"answer", "session_id", "query_id", "thinking", "tool_calls", "critique"} <= documented
    assert {"memory_hits", "event_log", "critique_pending", "status", "respondents"} <= documented
    # Every field the running API returns is one the document names.
    assert turn.status_code == 200 and set(turn.json()) <= documented
    assert set(history) <= fields(spec, "get", "/sessions/{session_id}/history")
    assert set(history["turns"][0]) <= set(
        resolve(spec, spec["components"]["schemas"]["HistoryTurn"])["properties"]
    )
    assert set(rated) <= fields(spec, "post", "/feedback")
    call = spec["components"]["schemas"]["ToolCall"]["properties"]
    assert {"tool", "args", "result", "error", "duration_s"} <= set(call)
    assert "null when it did not" in call["error"]["description"]
    assert {"report", "sources", "steps", "status"} <= fields(spec, "get", "/research/{run_id}")
    assert {"runs"} == fields(spec, "get", "/research")
    source = resolve(spec, spec["components"]["schemas"]["ResearchSource"])["properties"]
    assert {"n", "url", "kind", "found_by", "query", "rank", "score"} <= set(source)  # why read
    assert "reranker" in source["score"]["description"]
    # The error statuses are documented where they can happen.
    assert {"422", "404", "409", "503"} <= set(spec["paths"]["/query"]["post"]["responses"])
    assert (
        "text/event-stream" in spec["paths"]["/query/stream"]["post"]["responses"]["200"]["content"]
    )


def unavailable(messages: list[BaseMessage]) -> Any:
    raise ModelUnavailable("Ollama is not answering at 127.0.0.1:9.", "Start it: ollama serve")


def test_a_model_failure_is_503_with_its_fix_on_every_route(tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[unavailable], repeat_last=True)
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
        failed = client.post("/query", json={"query": "hello", "session_id": "s1"})
        stream = client.post("/query/stream", json={"query": "hello", "session_id": "s2"}).text
    assert failed.status_code == 503
    assert failed.json()["detail"] == {
        "error": "Ollama is not answering at 127.0.0.1:9.",
        "fix": "Start it: ollama serve",
    }
    # A stream already under way ends with the same reason instead of a reset.
    assert "event: error" in stream and "Start it: ollama serve" in stream
    assert "Traceback" not in stream


@pytest.mark.parametrize(
    ("error", "status", "detail"),
    [
        (InvalidQuery("Ask something."), 422, "Ask something."),
        (UnknownTurn("No session 's9'."), 404, "No session 's9'."),
        (CannotRetry("Already a second attempt."), 409, "Already a second attempt."),
        (
            ModelError("bad reply", "try another model"),
            502,
            {"error": "bad reply", "fix": "try another model"},
        ),
        (
            StorageUnavailable("locked", "close the other app"),
            503,
            {"error": "locked", "fix": "close the other app"},
        ),
        (StorageFull("disk full", "free space"), 507, {"error": "disk full", "fix": "free space"}),
    ],
)
def test_each_branch_of_the_hierarchy_has_one_status(
    error: Exception, status: int, detail: object
) -> None:
    assert status_of(error) == status  # type: ignore[arg-type]
    assert detail_of(error) == detail  # type: ignore[arg-type]


def test_a_turn_waiting_for_approval_says_how_to_resume() -> None:
    waiting = AwaitingApproval(
        {"calls": [{"id": "c1", "tool": "shell"}], "resume": "POST /sessions/s1/approval"}
    )
    assert status_of(waiting) == 409
    detail = detail_of(waiting)
    assert isinstance(detail, dict) and detail["resume"] == "POST /sessions/s1/approval"
    assert detail["approval"]["calls"] == [{"id": "c1", "tool": "shell"}]
    assert "shell" in detail["error"]
