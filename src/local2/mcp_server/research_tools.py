"""The research tools: ``research`` (a run, its steps as progress), ``research_status``,
``research_result``, ``research_input`` (answer a paused run) and ``list_research_runs``.

Each is the HTTP API's research route through the same service (:attr:`Agent.research`),
for the caller: a run is theirs, someone else's id answers as an unknown one does.
"""

import time
from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field, ValidationError

from local2.contracts import Person, PlanEdit, ResearchInput, ResearchPayload
from local2.errors import InvalidInput, NotFound
from local2.mcp_server._hints import READS, WORKS
from local2.mcp_server.caller import caller
from local2.mcp_server.failures import refusals
from local2.mcp_server.following import follow, in_background
from local2.mcp_server.shapes import ResearchResult, ResearchStatus, Runs

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

RunId = Annotated[str, Field(description="The run's id, as research returned it.")]
FIRST_STATE_S = 10.0


def report_uri(run_id: str) -> str:
    return f"local2://research/{run_id}"


def result_of(payload: ResearchPayload, run_id: str | None = None) -> ResearchResult:
    """The tool's answer for a run's payload (``run_id``: the run's, when the caller knows
    it; a payload read from a run's first checkpoint may not name it yet)."""
    run_id = run_id or str(payload.get("run_id") or "")
    return {
        "run_id": run_id,
        "question": str(payload.get("question") or ""),
        "status": payload["status"],
        "report": payload.get("report") or "",
        "sources": list(payload.get("sources") or []),
        "unsupported": len(payload.get("unsupported") or []),
        "stopped": payload.get("stopped"),
        "awaiting": payload.get("awaiting"),
        "no_sources": payload.get("no_sources"),
        "resource": report_uri(run_id),
    }


def first_state(agent: "Agent", run_id: str, person: Person) -> ResearchPayload | None:
    """A run just started, once its first checkpoint is written (None: not within
    :data:`FIRST_STATE_S`), so that research_status finds it from then on."""
    deadline = time.monotonic() + FIRST_STATE_S
    while time.monotonic() < deadline:
        with suppress(NotFound):
            return agent.research.payload(run_id, person, agent.access)
        time.sleep(0.05)
    return None


def started(run_id: str, question: str) -> ResearchResult:
    """A run just started in the background."""
    return {
        "run_id": run_id,
        "question": question.strip(),
        "status": "running",
        "report": "",
        "sources": [],
        "unsupported": 0,
        "stopped": None,
        "awaiting": None,
        "no_sources": None,
        "resource": report_uri(run_id),
    }


def research_input(
    approve: bool | None, plan: PlanEdit | None, answer: str | None, stop: bool | None
) -> ResearchInput:
    """The answer to a pause, checked as ``POST /research/{id}/input`` checks its body."""
    try:
        return ResearchInput(approve=approve, plan=plan, answer=answer, stop=stop)
    except ValidationError as exc:
        said = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise InvalidInput(said, "Send exactly one of approve, plan, answer or stop.") from None


def add_research_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """Register the research tools on ``server``, over ``agent``'s research service."""
    add_run_tool(server, agent, person)
    add_input_tool(server, agent, person)
    add_reading_tools(server, agent, person)


def add_run_tool(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """``research``: a run, followed to its end (or its pause), or started in the background."""

    @server.tool(title="Research a question", annotations=WORKS)
    @refusals
    async def research(
        question: Annotated[str, Field(description="The question to research.")],
        ctx: Context,
        max_rounds: Annotated[int | None, Field(ge=1, le=10)] = None,
        review: Annotated[
            bool, Field(description="Pause with the plan before the first search.")
        ] = False,
        clarify: Annotated[
            Literal["auto", "never"],
            Field(description="auto: the planner may first ask one clarifying question."),
        ] = "auto",
        wait: Annotated[
            bool,
            Field(description="false: return the run id at once; follow it with research_status."),
        ] = True,
        sources: Annotated[
            str | None,
            Field(
                description="Where to look, comma-separated: web, library, arxiv, pubmed, "
                "semantic_scholar, openalex, crossref, wikipedia (default: the settings')."
            ),
        ] = None,
        since: Annotated[
            str | None,
            Field(
                description="Only sources published on or after: 2024-03-05, 2024 or 'past year'."
            ),
        ] = None,
        until: Annotated[
            str | None, Field(description="Only sources published on or before (a date).")
        ] = None,
        domains: Annotated[
            list[str] | None, Field(description="Only sources on these hosts.")
        ] = None,
        exclude_domains: Annotated[
            list[str] | None, Field(description="Never sources on these hosts.")
        ] = None,
    ) -> ResearchResult:
        """Research a question on the web (or the configured sources): plan, search, read,
        verify, and write a report cited by source. Each step is sent as a progress
        notification. A run that pauses (review, or a clarifying question) returns status
        awaiting_input with what it waits for: answer it with research_input. Cancelling
        the call stops the run; its report is written from what was read."""
        who = caller(person)

        scope = {"since": since, "until": until, "domains": domains}
        scope["exclude_domains"] = exclude_domains

        def start() -> Any:
            return agent.research.stream(
                question,
                max_rounds=max_rounds,
                person=who,
                clarify=clarify,
                review=review,
                sources=sources,
                scope=scope,
            )

        items = await anyio.to_thread.run_sync(start)
        if not wait:
            run_id = await anyio.to_thread.run_sync(in_background, items)
            shown = await anyio.to_thread.run_sync(first_state, agent, run_id, who)
            return result_of(shown, run_id) if shown is not None else started(run_id, question)
        payload = await follow(agent, who, items, ctx.report_progress)
        return await _result(agent, str(payload.get("run_id")), who)


def add_input_tool(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """``research_input``: answer a paused run, and follow the rest of it."""

    @server.tool(name="research_input", title="Answer a paused research run", annotations=WORKS)
    @refusals
    async def answer_pause(
        run_id: RunId,
        ctx: Context,
        approve: Annotated[bool | None, Field(description="true: run the plan as shown.")] = None,
        plan: Annotated[
            PlanEdit | None, Field(description="Your plan: its sub-questions, in order.")
        ] = None,
        answer: Annotated[str | None, Field(description="The answer to its question.")] = None,
        stop: Annotated[
            bool | None, Field(description="true: end the run; its report says what was read.")
        ] = None,
    ) -> ResearchResult:
        """Answer a run that waits for the person (as POST /research/{id}/input): approve or
        edit its plan, answer its clarifying question, or stop it; the rest of the run
        follows, with progress, and its result is returned."""
        who = caller(person)
        given = research_input(approve, plan, answer, stop)
        items = await anyio.to_thread.run_sync(lambda: agent.research.input(run_id, given, who))
        await follow(agent, who, items, ctx.report_progress)
        return await _result(agent, run_id, who)


def add_reading_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """``research_status``, ``research_result`` and ``list_research_runs``."""

    @server.tool(title="How far a research run is", annotations=READS)
    @refusals
    async def research_status(run_id: RunId) -> ResearchStatus:
        """A run's status (running, awaiting_input, done, stopped, ...) and its progress."""
        payload = await _payload(agent, run_id, caller(person))
        steps = payload.get("steps") or []
        return {
            "run_id": run_id,
            "question": str(payload.get("question") or ""),
            "status": payload["status"],
            "steps_done": sum(1 for s in steps if s.get("status") == "done"),
            "steps": len(steps),
            "sources": len(payload.get("sources") or []),
            "awaiting": payload.get("awaiting"),
            "no_sources": payload.get("no_sources"),
        }

    @server.tool(title="A research run's report", annotations=READS)
    @refusals
    async def research_result(run_id: RunId) -> ResearchResult:
        """A run's verified report (Markdown, cited as [n]) and its sources, with the page
        and why each was read; a run still going says so in its status."""
        return await _result(agent, run_id, caller(person))

    @server.tool(title="Your research runs", annotations=READS)
    @refusals
    async def list_research_runs(
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
    ) -> Runs:
        """Your research runs, newest first, with their status."""
        who = caller(person)
        owner = agent.access.listing_owner(who)
        found = await anyio.to_thread.run_sync(lambda: agent.research.runs(limit, owner))
        return {"runs": found}


async def _payload(agent: "Agent", run_id: str, person: Person) -> ResearchPayload:
    return await anyio.to_thread.run_sync(
        lambda: agent.research.payload(run_id, person, agent.access)
    )


async def _result(agent: "Agent", run_id: str, person: Person) -> ResearchResult:
    return result_of(await _payload(agent, run_id, person))
