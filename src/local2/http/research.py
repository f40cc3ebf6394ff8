"""Research over HTTP.

``POST /research`` streams server-sent events: ``run`` first (the run id), then the
research and tool events (named by their subject), ``report`` when the report is
published, and ``done`` with the payload at the end, or ``error`` if the run stopped. A run
that pauses for the person (``review: true``, or ``clarify: auto`` when the planner asks)
ends its stream with ``awaiting_input`` instead: what it waits for (``waits_for``: ``plan``,
shown as sub-questions and steps, or ``answer`` to a question). ``POST
/research/{run_id}/input`` answers it (``{approve}``, ``{plan}`` or ``{answer}``, or
``{stop: true}`` to end it) and streams the rest of the run; ``POST /research/{run_id}/steer``
puts a say in a running run's inbox (``{text}``, ``{add}``, ``{drop}`` or ``{stop}``), and
``{stop: "run"}`` also ends a paused run (202 once its report is written). A stopped run's
report is written from what was read, its ``status`` is ``stopped`` and ``stopped`` says
why; it is never resumed into a search. ``POST /research/{run_id}/followup``
asks a follow-up on the finished report and streams its answer (a ``followup`` event).
``GET /research/{run_id}`` returns a run's payload (``status`` says whether it finished or
waits, ``awaiting`` what for); ``GET /research/{run_id}/export?format=bibtex`` (or
``/references``) its references as a file (ris, csl) or its report (md, html, pdf, docx);
``GET /research`` lists recent runs. Someone else's run answers 404 on each, as an unknown
one does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from local2.contracts import (
    EXPORT_FORMATS,
    PlanEdit,
    ResearchInput,
    ResearchItem,
    ResearchPayload,
    ResearchRun,
    Steer,
    SteerRecord,
)
from local2.http.identity import Caller
from local2.http.openapi import ERROR_RESPONSES, returns
from local2.http.sse import closed_when_gone, closing, frame
from local2.service import Agent


class ResearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str
    max_rounds: int | None = Field(default=None, ge=1, le=10)
    clarify: Literal["auto", "never"] = Field(
        default="auto",
        description="auto: the planner may ask one clarifying question first; never: it does not.",
    )
    review: bool = Field(default=False, description="Pause with the plan before the first search.")
    plan: PlanEdit | None = Field(default=None, description="Your own plan, run as given.")
    sources: str | list[str] | None = Field(
        default=None,
        description="Where to look, by name: web, library, arxiv, pubmed, semantic_scholar, "
        "openalex, crossref, wikipedia (a list, or comma-separated; both: web and library; "
        "library alone: no network; null: research.sources). An unknown name answers 422 "
        "with the known ones.",
    )
    since: str | None = Field(
        default=None,
        description="Only sources published on or after: 2024-03-05, 2024-03, 2024 or "
        "'past week|month|year' (null: research.since).",
    )
    until: str | None = Field(
        default=None, description="Only sources published on or before (a date, as since)."
    )
    domains: list[str] | None = Field(default=None, description="Only sources on these hosts.")
    exclude_domains: list[str] | None = Field(
        default=None, description="Never sources on these hosts."
    )
    keep: Literal["all", "research", "off"] | None = Field(
        default=None,
        description="What this run keeps of what it reads in your library (null: library.keep; "
        "off: nothing).",
    )


class FollowupBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str


class ResearchRuns(TypedDict):
    """``GET /research``: recent runs, newest first."""

    runs: list[ResearchRun]


def research_frames(items: Iterator[ResearchItem]) -> Iterator[str]:
    """A run's items as server-sent events; a paused run's end with ``awaiting_input``.
    Closed (its client went away), it closes ``items``: the run lets go of itself then,
    ``interrupted`` and free to resume (:func:`~local2.http.sse.closed_when_gone`)."""
    try:
        for kind, data in items:
            if kind == "event":
                yield frame(str(data.get("subject", "event")), data)
            elif kind == "final":
                if data.get("status") != "awaiting_input":
                    yield frame("done", data)
            else:
                yield frame(kind, data)
    finally:
        closing(items)


STREAM: dict[int | str, dict[str, Any]] = {  # FastAPI's responses (OpenAPI objects)
    200: {"content": {"text/event-stream": {}}},
    **ERROR_RESPONSES,
}


def research_routes(agent: Agent) -> APIRouter:
    """The research routes over ``agent``'s research service (:attr:`Agent.research`)."""
    router = APIRouter(tags=["research"])
    add_run_routes(router, agent)
    add_steer_and_read_routes(router, agent)
    return router


def add_run_routes(router: APIRouter, agent: Agent) -> None:
    """Start a run, resume it, answer its pause: each streams the run's events."""

    @router.post("/research", response_class=StreamingResponse, responses=STREAM)
    def start(person: Caller, body: ResearchBody) -> StreamingResponse:
        """Research a question: search, read, verify, report; its events as they happen."""
        items = agent.research.stream(
            body.question,
            max_rounds=body.max_rounds,
            person=person,
            clarify=body.clarify,
            review=body.review,
            plan=body.plan,
            sources=body.sources,
            keep=body.keep,
            scope=body.model_dump(include={"since", "until", "domains", "exclude_domains"}),
        )
        return closed_when_gone(research_frames(items))

    @router.post("/research/{run_id}/resume", response_class=StreamingResponse, responses=STREAM)
    def resume(person: Caller, run_id: str) -> StreamingResponse:
        """Continue the caller's unfinished run from its last finished step, as events."""
        return closed_when_gone(research_frames(agent.research.resume(run_id, person)))

    @router.post("/research/{run_id}/input", response_class=StreamingResponse, responses=STREAM)
    def answer(person: Caller, run_id: str, body: ResearchInput) -> StreamingResponse:
        """Answer the caller's paused run: ``{approve: true}`` or ``{plan}`` for its plan,
        ``{answer}`` for its question, ``{stop: true}`` to end it (its report from what was
        read); the rest of the run as events. A plan that breaks the rules answers 422 with
        the reasons, and the run stays paused."""
        return closed_when_gone(research_frames(agent.research.input(run_id, body, person)))


def add_steer_and_read_routes(router: APIRouter, agent: Agent) -> None:
    """Steer a running run, ask a follow-up on a finished one, list and read runs."""

    @router.post(
        "/research/{run_id}/steer",
        status_code=202,
        response_model=None,
        responses={
            202: {"model": SteerRecord, "description": "Filed in the run's inbox."},
            **ERROR_RESPONSES,
        },
    )
    def steer(person: Caller, run_id: str, body: Steer) -> SteerRecord:
        """Say something to the caller's running run (``{text}``, ``{add}``, ``{drop}`` a
        sub-question, ``{stop}`` one or ``{stop: "run"}``): applied at its next step
        boundary and shown in its event log. ``{stop: "run"}`` to a paused run ends it: the
        answer comes once its report (from what was read) is written."""
        return agent.research.steer(run_id, body, person)

    @router.post("/research/{run_id}/followup", response_class=StreamingResponse, responses=STREAM)
    def followup(person: Caller, run_id: str, body: FollowupBody) -> StreamingResponse:
        """Ask a follow-up on the caller's finished report: answered from its sources
        first, searching only for what they lack; the answer as a ``followup`` event."""
        items = agent.research.followup(run_id, body.question, person)
        return closed_when_gone(research_frames(items))

    @router.get("/research", **returns(ResearchRuns))
    def runs(person: Caller, limit: int = 20, everyone: bool = False) -> ResearchRuns:
        """The caller's runs, newest first (an admin's ``everyone``: all)."""
        owner = agent.access.listing_owner(person, everyone)
        return {"runs": agent.research.runs(max(1, min(limit, 200)), owner)}

    @router.get("/research/{run_id}", **returns(ResearchPayload, "The run's payload."))
    def run(person: Caller, run_id: str) -> ResearchPayload:
        return agent.research.payload(run_id, person, agent.access)

    # a library's own dict: FastAPI's route keywords, the same for both paths of one file
    exported_file: dict[str, Any] = {
        "response_class": Response,
        "responses": {
            200: {"content": {m: {} for _, m in EXPORT_FORMATS.values()}},
            **ERROR_RESPONSES,
        },
    }

    @router.get("/research/{run_id}/export", **exported_file)
    @router.get("/research/{run_id}/references", **exported_file)
    def references(person: Caller, run_id: str, format: str = "bibtex") -> Response:
        """The caller's run's references as a file: ``format`` bibtex, ris, csl (CSL-JSON);
        or its report: md, html, pdf, docx (citations linked to the References, pages
        kept). An unknown format answers 422, a run with no report yet 409 (html, pdf,
        docx); another person's run 404, as an unknown one does."""
        exported = agent.research.export(run_id, format, person, agent.access)
        disposition = f'attachment; filename="{exported.filename}"'
        return Response(
            exported.data,
            media_type=exported.media_type,
            headers={"Content-Disposition": disposition},
        )
