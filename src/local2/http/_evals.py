"""Eval runs over HTTP.

``POST /eval`` starts a run (or, with ``resume``, goes on with one) and streams server-sent
events: ``run`` first (its id, the set, the model, the grader), ``progress`` as questions
start and end (with the time left), ``question`` with each question's record, and ``done``
with the run's report, or ``error``/``stopped``. A client that goes away stops the run
(:func:`~local2.http._sse.closed_when_gone`); it can be resumed. ``POST /eval/{run_id}/stop``
stops it from elsewhere. ``GET /eval`` lists the caller's runs, ``GET /eval/{run_id}`` shows
one with every question, ``GET /eval/{run_a}/compare/{run_b}`` compares two (exact
McNemar).
Another person's run answers 404 exactly as an unknown id does.

A set is ``demo`` or the name of a set placed in ``<data dir>/eval-sets/``: a request never
names a path on the server. ``backend`` and ``model`` choose what answers (default: the
server's); a backend it does not know is refused (422, naming the ones it knows), and a
model the backend cannot give is refused before the run starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from local2.config import BackendName
from local2.contracts import Comparison, EvalDetail, EvalItem, EvalRunRow, Person
from local2.errors import InvalidInput, NothingToStop
from local2.http._identity import Caller
from local2.http._openapi import ERROR_RESPONSES, returns
from local2.http._sse import closed_when_gone, closing, frame
from local2.service import Agent


class EvalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set: str | None = Field(
        default=None, description="demo, or the name of a set in <data dir>/eval-sets/."
    )
    resume: str | None = Field(default=None, description="Go on with this run instead.")
    mode: Literal["ask", "research"] = "ask"
    backend: BackendName | None = Field(
        default=None,
        description="The kind of server that answers: auto, ollama, embedded or openai "
        "(default: the server's own, generator.backend).",
    )
    model: str | None = Field(
        default=None,
        description="The model that answers, on backend (default: generator.model).",
    )
    grader: str | None = Field(default=None, description="Default: the critic's judge model.")
    limit: int | None = Field(default=None, ge=1)
    sample: int | None = Field(default=None, ge=1)
    seed: int | None = None
    concurrency: int | None = Field(default=None, ge=1, le=16)


class EvalRuns(TypedDict):
    """``GET /eval``: the caller's runs, newest first."""

    runs: list[EvalRunRow]


class EvalStopped(TypedDict):
    run_id: str
    status: Literal["stopping"]


def eval_frames(items: Iterator[EvalItem], seen: dict[str, str]) -> Iterator[str]:
    """A run's items as server-sent events (``final`` is ``done``); ``seen`` gets its id.
    Closed, it closes ``items`` too: the run settles then (:func:`closed_when_gone`)."""
    try:
        for kind, data in items:
            if kind == "run":
                seen["run_id"] = data["run_id"]
            yield frame("done" if kind == "final" else kind, data)
    finally:
        closing(items)


def eval_items(agent: Agent, body: EvalBody, person: Person) -> Iterator[EvalItem]:
    """The run ``body`` asks for: the resumed one, or a new run of its set."""
    if body.resume:
        if body.backend or body.model:
            raise InvalidInput(
                "A resumed run answers with the model it started with: leave out "
                "backend and model, or start a new run with them."
            )
        return agent.evals.resume(body.resume, concurrency=body.concurrency, person=person)
    if body.set:
        return agent.evals.start(
            body.set,
            mode=body.mode,
            model=body.model,
            backend=body.backend,
            grader=body.grader,
            limit=body.limit,
            sample=body.sample,
            seed=body.seed,
            concurrency=body.concurrency or 1,
            person=person,
        )
    raise InvalidInput("Give set (demo, or a set in eval-sets/) or resume (a run id).")


def eval_routes(agent: Agent) -> APIRouter:
    """The eval routes over ``agent``'s eval runs (:attr:`Agent.evals`)."""
    router = APIRouter(tags=["eval"])

    @router.post(
        "/eval",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}, **ERROR_RESPONSES},
    )
    def start(person: Caller, body: EvalBody) -> StreamingResponse:
        """Run a question set (or resume a run), grading every answer; progress as events."""
        items = eval_items(agent, body, person)
        seen: dict[str, str] = {}

        def gone() -> None:  # the client went away: the run stops, to be resumed
            if "run_id" in seen:
                agent.evals.stop(seen["run_id"], person)

        return closed_when_gone(eval_frames(items, seen), gone)

    @router.get("/eval", **returns(EvalRuns))
    def runs(person: Caller, limit: int = 100, everyone: bool = False) -> EvalRuns:
        """The caller's runs, newest first, with their accuracy so far (an admin's
        ``everyone``: all, written to the admin read log)."""
        owner = agent.access.listing_owner(person, everyone)
        return {"runs": agent.evals.runs(owner, max(1, min(limit, 1000)))}

    @router.get("/eval/{run_id}", **returns(EvalDetail, "The run and every question."))
    def show(person: Caller, run_id: str) -> EvalDetail:
        return agent.evals.show(run_id, person)

    @router.get("/eval/{run_a}/compare/{run_b}", **returns(Comparison))
    def compare(person: Caller, run_a: str, run_b: str) -> Comparison:
        """The two runs on the questions both graded: the paired counts and exact McNemar,
        worded so that a gap inside the noise is never called a win."""
        return agent.evals.compare(run_a, run_b, person)

    @router.post("/eval/{run_id}/stop", **returns(EvalStopped, "The run is stopping."))
    def stop(person: Caller, run_id: str) -> EvalStopped:
        """Stop the caller's run going in this server: the questions in flight end before
        their answer and are asked again when the run resumes. 409 when it is not going."""
        if not agent.evals.stop(run_id, person):
            raise NothingToStop(f"Eval run '{run_id}' is not running here.")
        return {"run_id": run_id, "status": "stopping"}

    return router
