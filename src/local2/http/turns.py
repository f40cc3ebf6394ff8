"""Turns over HTTP: ``POST /query`` (the payload) and ``POST /query/stream`` (its events).

The stream's events (``event:`` name, ``data:`` one JSON object):
- ``thinking`` ``{text}`` and ``token`` ``{text}``: the model's thinking and answer as they
  stream (tokens streamed before a tool call were the call's markup, not the answer);
- ``tool_call`` and ``tool_result``: the ``tool.request.*`` / ``tool.result.*`` log entries;
- ``answer``: the turn payload at publish (``critique: null``, ``critique_pending``);
- ``critique``: the ``critique.result`` entry (score, feedback);
- ``event``: any other event-log entry (``query.received``, ``memory.ingested``, ...);
- ``done``: the final payload, critique included (``status: awaiting_approval`` when a tool
  call waits for the person; ``critique: null`` with ``critique_pending: true`` when the
  critic gave way to the session's next question: the grade comes later, in
  ``GET /sessions/{id}/history``); or ``error`` ``{error, fix}`` instead, or ``stopped`` when
  ``POST /sessions/{id}/stop`` stopped the turn before its answer (what streamed is
  abandoned; nothing was recorded).

On a compare turn (``model_b``, :mod:`local2.graph._compare`) both respondents answer at
once: every event's data carries ``respondent_id`` (``a``, ``b``, or null for the turn's
shared ones such as the question and the judge's ``pairwise`` verdict), so
``token``/``thinking`` of the two can be told apart, and there is one ``critique`` per
respondent. ``answer`` and ``done`` hold both answers in the payload's ``respondents``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from fastapi import APIRouter
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from local2 import events
from local2.contracts import EventEntry, TurnOptions, TurnPayload
from local2.errors import TurnCancelled
from local2.http.bodies import session_id_field
from local2.http.errors import stopped_response
from local2.http.identity import Caller
from local2.http.openapi import ERROR_RESPONSES, returns
from local2.http.sse import event_stream, frame
from local2.service import Agent, BackgroundTurn

Wait = Literal["answer", "critique"]
# The longest ``wait=critique`` waits for a grade that gave way to the session's next question
# (it is given once the session is quiet: the person may keep asking).
GRADE_WAIT_S = 600.0


class QueryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    session_id: str | None = session_id_field(None)  # type: ignore[assignment]  # Pydantic's Field() stands in for the default
    wait: Wait | None = Field(
        default=None,
        description="answer (default): return at publish, critique pending; "
        "critique: return once the critic has graded.",
    )
    model_b: str | None = Field(default=None, description="A second respondent's model.")
    temperature_b: float | None = Field(default=None, ge=0, le=2)
    sources: str | list[str] | None = Field(
        default=None,
        description="Where the turn's web_search looks: web, library, arxiv, pubmed, "
        "semantic_scholar, openalex, crossref, wikipedia (a list, or comma-separated; "
        "null: web.search.sources). An unknown name answers 422 with the known ones.",
    )


def turn_options(agent: Agent, body: QueryBody) -> TurnOptions:
    """The options of a ``/query`` body: its ``model_b``/``temperature_b``, or the server's
    default (``serve --model-b``) when it names neither (both given as null: none); and its
    ``sources``."""
    given = body.model_fields_set & {"model_b", "temperature_b"}
    asked = body.model_b is not None or body.temperature_b is not None
    compare = None if asked or not given else False
    return agent.turns.options(
        body.model_b, body.temperature_b, compare=compare, sources=body.sources
    )


def answer_first(payload: TurnPayload, critic_on: bool) -> TurnPayload:
    """The payload as handed over at publish: the critique is still to come."""
    answered = not payload.get("error") and payload.get("status") != "awaiting_approval"
    pending = critic_on and answered and payload.get("critique") is None
    return {**payload, "critique": payload.get("critique"), "critique_pending": pending}


def graded_turn(agent: Agent, turn: BackgroundTurn) -> TurnPayload:
    """The turn's final payload with its own grade: given at its end, or, when the critic
    gave way to the session's next question, once given later (or ``critique_pending``
    still, after :data:`GRADE_WAIT_S`)."""
    final = agent.turns.graded(turn.until_final(), GRADE_WAIT_S)
    return {**final, "critique_pending": bool(final.get("critique_pending"))}


def event_name(entry: EventEntry) -> str:
    """The SSE event an event-log entry is sent as."""
    subject = str(entry.get("subject", ""))
    if subject.startswith(events.TOOL_REQUEST + "."):
        return "tool_call"
    if subject.startswith(events.TOOL_RESULT + "."):
        return "tool_result"
    if subject == events.CRITIQUE_RESULT:
        return "critique"
    if subject == events.PAIRWISE_RESULT:
        return "pairwise"
    return "event"


def turn_frames(turn: BackgroundTurn, critic_on: bool, compare: bool = False) -> Iterator[str]:
    """The turn's items as server-sent events. ``compare``: two respondents answer, and
    every event says whose it is."""

    def whose(data: Mapping[str, object]) -> Mapping[str, object]:
        return {"respondent_id": None, **data} if compare else data

    for kind, data in turn:
        if kind in ("thinking", "token"):
            yield frame(kind, whose({"text": data}))
        elif kind == "respondent":  # one respondent's thinking or token
            yield frame(data["kind"], {"text": data["text"], "respondent_id": data["id"]})
        elif kind == "event":
            yield frame(event_name(data), whose(data))
        elif kind == "answer":
            yield frame("answer", answer_first(data, critic_on))
        elif kind == "final":
            yield frame("done", {**data, "critique_pending": bool(data.get("critique_pending"))})


def turn_routes(agent: Agent) -> APIRouter:
    """``POST /query`` and ``POST /query/stream`` over ``agent``."""
    router = APIRouter(tags=["turns"])
    critic_on = agent.info.critic

    @router.post("/query", **returns(TurnPayload, "The turn payload."))
    async def query(person: Caller, body: QueryBody, wait: Wait | None = None) -> JSONResponse:
        """The turn payload as soon as the answer is published (``critique: null``,
        ``critique_pending: true``; the critic and memory finish after it), or once graded
        with ``wait=critique`` (query parameter or body field): this turn's own grade, also
        when it gave way to the session's next question and came later.

        Async, so that no thread waits for the turn: it starts from the event loop (unless
        its session's lock must be waited for) and the answer wakes the loop itself."""
        options = turn_options(agent, body)
        turn = await agent.turns.begin(
            body.query, body.session_id, options, tokens=False, person=person
        )
        try:
            if (body.wait or wait) == "critique":
                graded = await run_in_threadpool(graded_turn, agent, turn)
                return JSONResponse(jsonable_encoder(graded))
            payload = answer_first(await turn.answer(), critic_on)
        except TurnCancelled:  # POST /sessions/{id}/stop
            return stopped_response()

        async def hand_over() -> None:
            turn.hand_over()

        # The critic and memory go on once the response is sent, not while it is.
        return JSONResponse(jsonable_encoder(payload), background=BackgroundTask(hand_over))

    @router.post(
        "/query/stream",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}, **ERROR_RESPONSES},
    )
    def query_stream(person: Caller, body: QueryBody) -> StreamingResponse:
        """The turn as server-sent events: thinking, tool calls, answer tokens, the answer,
        then the critique and ``done`` with the final payload. The turn runs to its end
        even if the client goes away."""
        options = turn_options(agent, body)
        turn = agent.turns.start(body.query, body.session_id, options, person=person)
        return event_stream(turn_frames(turn, critic_on, compare=options.compare is not None))

    return router
