"""LoCAL2 as an MCP server, through the MCP SDK's own client over streamable HTTP at ``/mcp``
(uvicorn serving ``local2 serve``'s app, the Ollama-protocol test server answering, search
and pages on a loopback web): the tools and their annotations, ``ask`` as an ordinary turn,
``research`` with progress notifications, its report as a resource, a plan review and a
clarifying question answered through ``research_input``, a cancelled call's run stopped
(however early), documents, memory and the library, and bad input (arguments the schema
refuses too) answered in the API's words."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types import ResourceUpdatedNotification, TextResourceContents

from local2.contracts._people import LOCAL
from local2.errors import UnknownTurn
from local2.mcp_server._failures import ARGUMENTS_FIX
from local2.mcp_server._following import follow
from local2.service.agent import Agent
from local2_testkit.brains import Reply, RuleBrain, message_text
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.browser import app_served
from tests.kit.mcp_clients import http_session, structured
from tests.mcp.helpers import CORPUS, QUESTION, mcp_agent

READ = "Read this page and tell me what it says:"
TOOLS = {
    "ask",
    "research",
    "research_status",
    "research_result",
    "research_input",
    "search",
    "read_document",
    "recall_memory",
    "remember",
    "list_documents",
    "list_research_runs",
    "list_watches",
    "add_watch",
}


class ReadingBrain(ResearchBrain):
    """Research as :class:`ResearchBrain` answers it; a chat turn asking to read a page
    fetches it and answers from what it read, by :class:`RuleBrain`'s rules."""

    def __init__(self) -> None:
        super().__init__()
        self.rules = RuleBrain()

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        last = messages[-1] if messages else {}
        asks_to_read = last.get("role") == "user" and READ in message_text(last)
        if asks_to_read or last.get("role") == "tool":
            return self.rules(request)
        return super().__call__(request)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("mcp-server")
    brain = ReadingBrain()
    with FakeOllama(brain) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = mcp_agent(fake, web, data)
        with app_served(agent, ui=False) as url:
            mcp = f"{url}/mcp"
            yield {"agent": agent, "url": url, "mcp": mcp, "web": web, "fake": fake, "brain": brain}
        agent.close()


def run(coroutine: Any) -> Any:
    return anyio.run(lambda: coroutine)


def test_tools_are_listed_with_schemas_and_annotations(served: dict[str, Any]) -> None:
    async def listed() -> Any:
        async with http_session(served["mcp"]) as session:
            tools = (await session.list_tools()).tools
            templates = (await session.list_resource_templates()).resource_templates
            prompts = (await session.list_prompts()).prompts

            prompt = await session.get_prompt("research_this", {"question": "Why bridges?"})
            return tools, templates, prompts, prompt

    tools, templates, prompts, prompt = anyio.run(listed)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    for tool in tools:
        assert tool.input_schema["type"] == "object" and tool.output_schema, tool.name
        assert tool.annotations is not None, tool.name
    reads = ("search", "read_document", "recall_memory", "list_documents", "research_status")
    for name in reads:
        hints = by_name[name].annotations
        assert hints.read_only_hint is True and hints.open_world_hint is False, name
    remember = by_name["remember"].annotations
    assert remember.read_only_hint is False and remember.destructive_hint is False
    assert by_name["research"].annotations.open_world_hint is True
    assert by_name["ask"].input_schema["required"] == ["question"]
    assert "report" in by_name["research"].output_schema["properties"]
    assert {t.uri_template for t in templates} == {
        "local2://research/{run_id}",
        "local2://research/{run_id}/references.bibtex",
        "local2://research/{run_id}/references.ris",
        "local2://research/{run_id}/references.csl",
        "local2://research/{run_id}/report.html",
        "local2://research/{run_id}/report.pdf",
        "local2://research/{run_id}/report.docx",
        "local2://documents/{document_id}",
        "local2://documents/{document_id}/page/{n}",
    }
    assert {p.name for p in prompts} == {"research_this", "what_do_my_documents_say"}
    assert {p.title for p in prompts} == {"Research this", "What do my documents say about…"}
    said = prompt.messages[0].content.text
    assert "Why bridges?" in said and "research_input" in said


def test_a_run_started_in_the_background_is_followed(served: dict[str, Any]) -> None:
    async def followed() -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        async with http_session(served["mcp"]) as session:
            args = {"question": QUESTION, "max_rounds": 1, "clarify": "never", "wait": False}
            started = structured(await session.call_tool("research", args))
            seen = [started["status"]]
            with anyio.fail_after(120):
                while seen[-1] in ("running", "unfinished"):
                    await anyio.sleep(0.2)
                    status = await session.call_tool(
                        "research_status", {"run_id": started["run_id"]}
                    )
                    said = structured(status)
                    seen.append(said["status"])
                    if not isinstance(said["status"], str):
                        seen.append(said)
            result = await session.call_tool("research_result", {"run_id": started["run_id"]})
            return started, seen, structured(result)

    started, seen, result = anyio.run(followed)
    assert started["status"] == "running" and started["report"] == "", started
    assert seen[-1] == "done", seen
    assert result["status"] == "done" and result["report"], result


def test_ask_is_an_ordinary_turn(served: dict[str, Any]) -> None:
    agent: Agent = served["agent"]
    page = served["web"].page_url("01_harbour_bridge")

    async def asked() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with http_session(served["mcp"]) as session:
            first = structured(await session.call_tool("ask", {"question": "Where is Kelsby?"}))
            again = await session.call_tool(
                "ask",
                {"question": "And its bridge?", "session_id": first["session_id"]},
            )
            args = {"question": f"{READ} {page}", "wait_for_grade": True}
            read = structured(await session.call_tool("ask", args))
            return first, structured(again), read

    first, again, read = anyio.run(asked)
    assert first["answer"] and first["session_id"] == again["session_id"]
    assert first["status"] == "done" and first["query_id"] != again["query_id"]
    assert first["citations"] == [] and first["critique"] is None  # returned at publish
    assert first["critique_pending"] is True  # the critic grades after the answer
    assert read["citations"] == [{"kind": "url", "where": page, "page": None}]
    assert "swing bridge" in read["answer"] and "01_harbour_bridge" in served["web"].pages_served()
    critique = read["critique"]  # the scripted judge's grade, waited for
    assert read["critique_pending"] is False and critique["score"] == 4, critique
    assert "answers the instruction" in critique["feedback"]
    session_id = first["session_id"]
    assert agent.turns.wait_idle(60)  # the critic and memory finish after the answer
    history = agent.sessions.history(session_id)
    assert [t["user"] for t in history] == ["Where is Kelsby?", "And its bridge?"]
    assert [t["query_id"] for t in history] == [first["query_id"], again["query_id"]]
    assert any(s["session_id"] == session_id for s in agent.sessions.recent(50))  # the app's list
    assert len(agent.sessions.checkpoints(session_id)) >= 2  # time travel
    assert agent.access.session_owner(session_id) == "local"
    runs = agent.settings.data_dir / "runs" / session_id
    deadline = time.monotonic() + 30
    while len(list(runs.glob("*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(runs.glob("*.json"))) == 2  # the audit log, one record per turn
    rated = agent.ratings.feedback(session_id, first["query_id"], rating=5)
    assert rated["rating"] == 5


def test_research_sends_progress_and_its_report_is_a_resource(served: dict[str, Any]) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, message))

    async def researched() -> tuple[dict[str, Any], Any, dict[str, Any], dict[str, Any]]:
        async with http_session(served["mcp"]) as session:
            result = await session.call_tool(
                "research",
                {"question": QUESTION, "max_rounds": 1, "clarify": "never"},
                progress_callback=on_progress,
            )
            done = structured(result)
            report = await session.read_resource(done["resource"])
            status = await session.call_tool("research_status", {"run_id": done["run_id"]})
            await anyio.to_thread.run_sync(served["agent"].library.settle, 30.0)  # kept, indexed
            args = {"query": "Kelsby swing bridge repair", "within": ["library"], "k": 3}
            kept = structured(await session.call_tool("search", args))
            return done, report, structured(status), kept

    done, report, status, kept = anyio.run(researched)
    assert kept["hits"] and {h["source"] for h in kept["hits"]} == {"library"}  # what it read
    assert done["status"] == "done" and done["report"]
    assert done["sources"] and {"page", "found_by", "query", "rank"} <= set(done["sources"][0])
    messages = [m or "" for _, m in progress]
    assert messages[0].startswith(f"run {done['run_id']} started")
    assert any(m.startswith("step ") and " done" in m for m in messages)
    assert [n for n, _ in progress] == sorted(n for n, _ in progress)
    contents = report.contents[0]
    assert isinstance(contents, TextResourceContents)
    assert contents.mime_type == "text/markdown" and contents.text == done["report"]
    assert status["status"] == "done" and status["steps_done"] == status["steps"] > 0


def test_a_plan_review_is_answered_through_research_input(served: dict[str, Any]) -> None:
    async def reviewed() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str]]:
        notes: list[str] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            notes.append(message or "")

        async with http_session(served["mcp"]) as session:
            args = {"question": QUESTION, "max_rounds": 1, "review": True}
            paused = structured(await session.call_tool("research", args))
            run_id = paused["run_id"]
            wrong = await session.call_tool(
                "research_input", {"run_id": run_id, "approve": True, "answer": "x"}
            )
            rest = await session.call_tool(
                "research_input",
                {"run_id": run_id, "approve": True},
                progress_callback=on_progress,
            )
            return paused, structured(wrong), structured(rest), notes

    paused, wrong, rest, notes = anyio.run(reviewed)
    assert paused["status"] == "awaiting_input" and paused["report"] == ""
    assert paused["awaiting"]["waits_for"] == "plan"
    assert wrong["status"] == 422 and "send exactly one of" in wrong["error"]
    assert rest["status"] == "done" and rest["run_id"] == paused["run_id"] and rest["report"]
    assert any(n.startswith("step ") for n in notes)


def test_a_clarifying_question_is_answered_through_research_input(
    served: dict[str, Any],
) -> None:
    agent: Agent = served["agent"]
    readings = ["the swing bridge", "the rail bridge"]
    asking = {
        **default_plan("Kelsby bridge"),
        "clarify": {"question": "Which?", "readings": readings},
    }
    served["brain"].plans.append(asking)  # the first plan asks first

    async def clarified() -> tuple[dict[str, Any], dict[str, Any]]:
        async with http_session(served["mcp"]) as session:
            args = {"question": "Tell me about the Kelsby bridge", "max_rounds": 1}
            paused = structured(await session.call_tool("research", args))  # clarify: auto
            answer = {"run_id": paused["run_id"], "answer": "the swing bridge"}
            return paused, structured(await session.call_tool("research_input", answer))

    paused, rest = anyio.run(clarified)
    assert paused["status"] == "awaiting_input" and paused["report"] == ""
    assert paused["awaiting"]["waits_for"] == "answer"
    assert paused["awaiting"]["clarify"] == {"question": "Which?", "readings": readings}
    assert rest["status"] == "done" and rest["run_id"] == paused["run_id"] and rest["report"]
    payload = agent.research.payload(rest["run_id"])
    assert payload["clarification"]["answer"] == "the swing bridge"  # into the plan
    assert [p["origin"] for p in payload["plan"]] == ["clarify", "model"]


def until_ended(agent: Agent, run_id: str) -> str:
    """The run's status once it no longer runs (a cancelled call's run ends in its worker)."""
    deadline = time.monotonic() + 120
    status = "running"
    while status in ("running", "unfinished") and time.monotonic() < deadline:
        time.sleep(0.1)
        status = agent.research.payload(run_id)["status"]
    return status


def stopped_by_the_person(agent: Agent, run_id: str) -> None:
    """Stopped as ``POST /research/{id}/steer {stop: "run"}`` stops a run: the say in its
    inbox, applied at a step boundary, its report written from what was read."""
    payload = agent.research.payload(run_id)
    assert payload["status"] == "stopped", payload["status"]
    assert payload["stopped"] == "the person stopped the run"
    assert payload["report"]
    says = agent.research.inbox.since(run_id, 0)
    assert [(s["kind"], s["value"]) for s in says] == [("stop", "run")]


def test_a_cancelled_research_call_stops_its_run(served: dict[str, Any]) -> None:
    """The client cancels the call (``notifications/cancelled``) and goes on in the same
    session: the run is stopped as the person's Stop stops it."""
    agent: Agent = served["agent"]

    async def cancelled() -> tuple[bool, str, dict[str, Any], dict[str, Any]]:
        run_ids: list[str] = []
        async with http_session(served["mcp"]) as session:
            with anyio.CancelScope() as call:

                async def on_progress(done: float, total: float | None, note: str | None) -> None:
                    if note and note.startswith("run "):
                        run_ids.append(note.split()[1])
                    if note and note.startswith("step "):
                        call.cancel()  # the SDK sends notifications/cancelled for the call

                args = {"question": QUESTION, "max_rounds": 2, "clarify": "never"}
                with anyio.fail_after(120):
                    await session.call_tool("research", args, progress_callback=on_progress)
            run_id = run_ids[0]
            status = await anyio.to_thread.run_sync(until_ended, agent, run_id)
            shown = structured(await session.call_tool("research_status", {"run_id": run_id}))
            result = structured(await session.call_tool("research_result", {"run_id": run_id}))
        return call.cancelled_caught, status, shown, result

    served["fake"].delay_s = 0.3  # each reply: the run still goes when the call is cancelled
    try:
        caught, status, shown, result = anyio.run(cancelled)
    finally:
        served["fake"].delay_s = 0.0
    assert caught and status == "stopped", status
    stopped_by_the_person(agent, shown["run_id"])
    assert shown["status"] == result["status"] == "stopped"  # the session went on
    assert result["stopped"] == "the person stopped the run" and result["report"]


def test_a_run_cancelled_before_it_names_itself_is_stopped(served: dict[str, Any]) -> None:
    """Cancelled before the run has said its id (or has a state to stop), the run is
    stopped all the same, by the worker that drives it, rather than left to finish."""
    agent: Agent = served["agent"]
    reached, release = threading.Event(), threading.Event()
    run_id = "mcp-cancelled-early"

    def held(items: Iterator[Any]) -> Iterator[Any]:
        reached.set()
        release.wait(60)
        yield from items

    items = held(agent.research.stream(QUESTION, max_rounds=2, clarify="never", run_id=run_id))

    async def cancelled() -> None:
        with anyio.CancelScope() as call:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(follow, agent, LOCAL, items, None)
                await anyio.to_thread.run_sync(reached.wait)
                call.cancel()

    anyio.run(cancelled)  # the call is over: its run has not started yet
    release.set()
    assert until_ended(agent, run_id) == "stopped"
    stopped_by_the_person(agent, run_id)


def test_a_cancelled_ask_stops_its_turn(served: dict[str, Any]) -> None:
    """The client cancels the call (``notifications/cancelled``) and goes on in the same
    session: the turn is stopped as ``POST /sessions/{id}/stop`` stops it."""
    agent: Agent = served["agent"]

    async def cancelled() -> tuple[bool, dict[str, Any]]:
        async with http_session(served["mcp"]) as session:
            with anyio.CancelScope() as call:

                async def cancel_once_running() -> None:
                    with anyio.fail_after(60):
                        while not agent.turns.is_running("mcp-cancelled"):
                            await anyio.sleep(0.02)
                    call.cancel()  # the SDK sends notifications/cancelled for the call

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(cancel_once_running)
                    args = {"question": "Where is Kelsby?", "session_id": "mcp-cancelled"}
                    await session.call_tool("ask", args)
            after = structured(await session.call_tool("list_documents", {}))
        return call.cancelled_caught, after

    served["fake"].delay_s = 2.0  # the model is still thinking when the call is cancelled
    try:
        caught, after = anyio.run(cancelled)
        assert agent.turns.wait_idle(60)
    finally:
        served["fake"].delay_s = 0.0
    assert caught and "documents" in after  # the session went on after the cancel
    recorded: list[Any] = []
    with suppress(UnknownTurn):  # no session at all: nothing recorded either
        recorded = list(agent.sessions.history("mcp-cancelled"))
    assert recorded == []  # stopped before its answer, as POST /sessions/{id}/stop stops it


def test_documents_search_and_memory(served: dict[str, Any]) -> None:
    agent: Agent = served["agent"]

    text = "Kelsby bridge ledger\n\fThe toll of the Kelsby bridge paid for its repairs."
    record = agent.documents.add(LOCAL, "ledger.txt", text.encode())

    async def used() -> dict[str, Any]:
        async with http_session(served["mcp"]) as session:
            listed = structured(await session.call_tool("list_documents", {}))
            page = structured(
                await session.call_tool(
                    "read_document", {"document_id": record["id"], "first_page": 2}
                )
            )
            resource = await session.read_resource(f"local2://documents/{record['id']}/page/2")
            saved = structured(
                await session.call_tool("remember", {"text": "My favourite bridge is Kelsby's."})
            )
            recalled = structured(
                await session.call_tool("recall_memory", {"query": "favourite bridge"})
            )
            found = structured(await session.call_tool("search", {"query": "Kelsby bridge toll"}))
            return {
                "listed": listed,
                "page": page,
                "resource": resource,
                "saved": saved,
                "recalled": recalled,
                "found": found,
            }

    got = anyio.run(used)
    assert [d["id"] for d in got["listed"]["documents"]] == [record["id"]]
    assert got["page"]["pages"] == [
        {"n": 2, "text": "The toll of the Kelsby bridge paid for its repairs."}
    ]
    assert "toll of the Kelsby bridge" in got["resource"].contents[0].text
    assert got["recalled"]["memories"][0]["id"] == got["saved"]["id"]
    hits = got["found"]["hits"]
    assert {h["source"] for h in hits} >= {"documents", "memory"}
    document = next(h for h in hits if h["source"] == "documents")
    assert document["page"] == 2 and document["path"] == record["path"]
    assert document["score"] > 0
    assert set(document["why"]) == {
        "bm25_rank",
        "vector_rank",
        "linked_rank",
        "linked_from",
        "reranked",
    }


# A mistake the tool's input schema refuses: (tool, arguments, the API's request making it).
MISTAKES: dict[str, tuple[str, dict[str, Any], Callable[[httpx.Client], httpx.Response]]] = {
    "no question": ("research", {}, lambda c: c.post("/research", json={})),
    "k=0": ("search", {"query": "x", "k": 0}, lambda c: c.get("/search?q=x&k=0")),
    "max_rounds": (
        "research",
        {"question": QUESTION, "max_rounds": 11},
        lambda c: c.post("/research", json={"question": QUESTION, "max_rounds": 11}),
    ),
    "a wrong type": (
        "research",
        {"question": QUESTION, "review": "maybe", "max_rounds": "two"},
        lambda c: c.post(
            "/research", json={"question": QUESTION, "review": "maybe", "max_rounds": "two"}
        ),
    ),
}


def test_bad_input_gets_the_apis_words(served: dict[str, Any]) -> None:
    url = served["url"]

    async def refused() -> dict[str, Any]:
        async with http_session(served["mcp"]) as session:
            empty = await session.call_tool("ask", {"question": "  "})
            unknown = await session.call_tool("research_result", {"run_id": "nope"})
            bad_id = await session.call_tool("research_status", {"run_id": "bad id"})
            page = await session.call_tool("read_document", {"document_id": "doc-nope"})
            no_tool = await session.call_tool("summarise", {"text": "x"})
            try:
                await session.read_resource("local2://research/nope")
                resource_error: Any = None
            except Exception as exc:  # the SDK raises the JSON-RPC error
                resource_error = exc
            schema = {n: await session.call_tool(t, a) for n, (t, a, _) in MISTAKES.items()}
            return {
                "empty": empty,
                "unknown": unknown,
                "bad_id": bad_id,
                "page": page,
                "no_tool": no_tool,
                "resource": resource_error,
                "schema": schema,
            }

    got = anyio.run(refused)
    with httpx.Client(base_url=url, timeout=30) as client:
        api_unknown = client.get("/research/nope").json()["detail"]
        api_empty = client.post("/query", json={"query": "  "})
        api_bad_id = client.get("/research/bad%20id")
        api_schema = {n: api(client) for n, (_, _, api) in MISTAKES.items()}
    for name, result in got["schema"].items():  # refused by the schema, in the API's words
        said, api_said = structured(result), api_schema[name]
        assert result.is_error and api_said.status_code == 422, name
        assert said == {"error": api_said.json()["detail"], "fix": ARGUMENTS_FIX, "status": 422}
    assert structured(got["schema"]["no question"])["error"] == "question: Field required"
    for name in ("empty", "unknown", "bad_id", "page", "no_tool"):
        assert got[name].is_error, name
    refusals = [*got["schema"].values(), *(got[n] for n in ("empty", "unknown", "bad_id", "page"))]
    for result in [*refusals, got["no_tool"]]:  # said in text alone, each with a fix
        assert result.structured_content is None and structured(result)["fix"].strip()
    assert "list_research_runs" in structured(got["unknown"])["fix"]
    assert "list_documents" in structured(got["page"])["fix"]
    no_tool = structured(got["no_tool"])
    assert no_tool["error"] == "No tool 'summarise' here." and no_tool["status"] == 404
    assert "ask, list_documents" in no_tool["fix"] and "research_input" in no_tool["fix"]
    unknown = structured(got["unknown"])
    assert unknown["error"] == api_unknown and unknown["status"] == 404 and "fix" in unknown
    assert structured(got["empty"])["error"] == api_empty.json()["detail"]
    assert structured(got["empty"])["status"] == api_empty.status_code == 422
    assert structured(got["bad_id"])["error"] == api_bad_id.json()["detail"]
    assert structured(got["page"])["status"] == 404
    error = got["resource"]
    assert error is not None and error.error.message == api_unknown
    assert error.error.data["fix"] and error.error.code == -32002  # the handshake era's code


def test_watches_are_listed_and_added_and_a_bad_one_refused_in_the_apis_words(
    served: dict[str, Any],
) -> None:
    bad = {"question": "Kelsby bridge", "schedule": "61 7 * * *"}

    async def called() -> dict[str, Any]:
        async with http_session(served["mcp"]) as session:
            added = await session.call_tool(
                "add_watch",
                {"question": "Kelsby bridge", "schedule": "every Monday 07:00",
                 "timezone": "Europe/Berlin", "notify": ["json://kim:s3cret@127.0.0.1:9/x"]},
            )  # fmt: skip
            refused = await session.call_tool("add_watch", bad)
            listed = await session.call_tool("list_watches", {})
            return {"added": added, "refused": refused, "listed": listed}

    got = anyio.run(called)
    with httpx.Client(base_url=served["url"], timeout=30) as client:
        api_refused = client.post("/watches", json=bad)
        api_listed = client.get("/watches").json()["watches"]
    added = structured(got["added"])
    assert not got["added"].is_error and added["schedule"] == "every Monday 07:00"
    [target] = added["targets"]
    assert target.startswith("json://kim:****@127.0.0.1:9/x") and "s3cret" not in target
    assert structured(got["listed"])["watches"] == api_listed
    assert [w["watch_id"] for w in api_listed] == [added["watch_id"]]  # nothing half-made
    refused = got["refused"]
    assert refused.is_error and refused.structured_content is None  # text alone, as others
    assert api_refused.status_code == 422
    assert structured(refused) == {**api_refused.json()["detail"], "status": 422}
    assert "e.g." in structured(refused)["fix"]
    served["agent"].watches.remove(LOCAL, added["watch_id"])


PAUSED = {"question": QUESTION, "max_rounds": 1, "clarify": "never", "review": True}


def test_a_subscribed_report_is_told_updated_until_its_run_is_done(
    served: dict[str, Any],
) -> None:
    """The Python SDK's client (2025-11-25, over /mcp): a report subscribed to while its run
    waits is told ``notifications/resources/updated`` when the run goes on, and once done it
    reads as the report; of two documents subscribed to, then one unsubscribed, both removed,
    only the one still subscribed to is told."""
    agent: Agent = served["agent"]
    kept, dropped = (agent.documents.add(LOCAL, f"{n}.txt", f"Note {n}.".encode()) for n in "ab")

    async def followed() -> tuple[dict[str, Any], list[str], str, list[str], dict[str, str]]:
        updated: list[str] = []

        async def heard(message: Any) -> None:
            if isinstance(message, ResourceUpdatedNotification):
                updated.append(message.params.uri)

        async with Client(served["mcp"], mode="legacy", message_handler=heard) as client:
            paused = structured(await client.call_tool("research", PAUSED))
            uri = paused["resource"]
            await client.session.subscribe_resource(uri)
            approve = {"run_id": paused["run_id"], "approve": True}
            done = structured(await client.call_tool("research_input", approve))
            seen = 0
            with anyio.fail_after(30):  # each update read; the last is the report
                while True:
                    while len(updated) == seen:
                        await anyio.sleep(0.05)
                    seen = len(updated)
                    text = (await client.read_resource(uri)).contents[0].text
                    if "No report yet" not in text:
                        break
            run_updates = list(updated)
            documents = {
                n: f"local2://documents/{r['id']}"
                for n, r in (("kept", kept), ("dropped", dropped))
            }
            for document in documents.values():
                await client.session.subscribe_resource(document)
            await client.session.unsubscribe_resource(documents["dropped"])
            await anyio.to_thread.run_sync(lambda: agent.documents.remove(LOCAL, kept["id"]))
            await anyio.to_thread.run_sync(lambda: agent.documents.remove(LOCAL, dropped["id"]))
            with anyio.fail_after(30):
                while documents["kept"] not in updated:
                    await anyio.sleep(0.05)
            await anyio.sleep(4.5)  # two more rounds of the watch: the other is never told
            return done, run_updates, text, updated[len(run_updates) :], documents

    done, run_updates, text, document_updates, documents = anyio.run(followed)
    assert done["status"] == "done" and text == done["report"]
    assert run_updates and set(run_updates) == {done["resource"]}
    # the run may still be told once more (its grade lands after the report), never a document
    # it did not subscribe to
    assert set(document_updates) - set(documents.values()) <= {done["resource"]}
    assert [u for u in document_updates if u in documents.values()] == [documents["kept"]]


def test_a_2026_client_hears_changes_on_its_listen_stream(served: dict[str, Any]) -> None:
    """The Python SDK's client at 2026-07-28, where changes come only on
    ``subscriptions/listen``: the stream's acknowledgement honours the report it named and
    not an unknown one; the report is told updated until its run is done, and the listing
    changed when it is."""

    async def listened() -> tuple[Any, list[Any], str, dict[str, Any]]:
        events: list[Any] = []
        async with Client(served["mcp"], mode="2026-07-28", cache=None) as client:
            paused = structured(await client.call_tool("research", PAUSED))
            uri = paused["resource"]
            named = [uri, "local2://research/nope"]
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=named
            ) as sub:
                approve = {"run_id": paused["run_id"], "approve": True}
                done = structured(await client.call_tool("research_input", approve))
                text = ""
                with anyio.fail_after(30):
                    async for event in sub:
                        events.append(event)
                        if isinstance(event, ResourceUpdated):
                            text = (await client.read_resource(uri)).contents[0].text
                        heard_list = any(isinstance(e, ResourcesListChanged) for e in events)
                        if heard_list and text and "No report yet" not in text:
                            break
            return sub.honored, events, text, {**done, "uri": uri}

    honored, events, text, done = anyio.run(listened)
    assert honored.resource_subscriptions == [done["uri"]] and honored.resources_list_changed
    assert ResourceUpdated(uri=done["uri"]) in events and ResourcesListChanged() in events
    assert done["status"] == "done" and text == done["report"]
