"""What a person sends a research run: the answer to a pause, or a say while it runs.

A paused run (LangGraph ``interrupt``) waits for its ``plan`` (review) or an ``answer`` (a
clarifying question); :class:`ResearchInput` is the resume value, ``{approve}``, ``{plan}``,
``{answer}`` or ``{stop: true}`` (the run writes its report from what was read and ends), and
the ``response_schema`` LangGraph Server shows for the pause. A
:class:`Steer` reaches a running run through its inbox: ``{text}``, ``{add}``, ``{drop}``
or ``{stop}``. A plan is edited by sub-question (:class:`PlanEdit`): keep an ``id`` to keep
that sub-question's steps, leave it out for a new one; the order given is the order run.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from local2.contracts._tool_names import WEB_FETCH, WEB_SEARCH

WaitsFor = Literal["plan", "answer"]
SteerKind = Literal["text", "add", "drop", "stop"]
STOP_RUN = "run"  # {"stop": "run"} (or true) stops the whole run
SUBQUESTION_CHARS = 200
ANSWER_CHARS = 500
_LINE_ID = re.compile(r"^\s*(?:[-*]\s*)?(?P<id>q\d{1,3})\s*[:.)]\s*(?P<text>.*)$", re.I)


def _one_of(model: BaseModel, names: tuple[str, ...]) -> str:
    given = [n for n in names if getattr(model, n) is not None]
    if len(given) != 1:
        listed = ", ".join(f"{{{n}}}" for n in names)
        raise ValueError(f"send exactly one of {listed} (got {len(given) or 'none'})")
    return given[0]


class SubQuestionEdit(BaseModel):
    """One sub-question as the person leaves it: its ``id`` (kept) or none (new)."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, max_length=16)
    text: str = Field(max_length=SUBQUESTION_CHARS)

    @field_validator("text")
    @classmethod
    def _written(cls, value: str) -> str:
        text = " ".join(value.split())
        if not text:
            raise ValueError("a sub-question is empty: write it or remove it")
        return text


# What the server shows beside a step it lists (``GET /research/{id}``'s ``awaiting.steps``,
# a plan's ``steps`` in the payload): sent back with an edited plan, they are accepted and
# ignored, so a plan round-trips as shown.
SHOWN_STEP_FIELDS = ("branch", "subquestion", "status", "round", "error", "followup")


class PlanStepEdit(BaseModel):
    """One step of a whole plan the person writes or edits (the planner's own shape); the
    fields the server adds when it shows a step are accepted and ignored."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=16)
    description: str = ""
    tool: str = Field(min_length=1, description="web_search, web_fetch, ... or compose (last).")
    args: dict[str, Any] = Field(default_factory=dict)  # as the person wrote them (JSON)
    requires: list[str] = Field(default_factory=list)
    branch: str | None = Field(default=None, description="Shown by the server; ignored.")
    subquestion: str | None = Field(default=None, description="Shown by the server; ignored.")
    status: str | None = Field(default=None, description="Shown by the server; ignored.")
    round: int | None = Field(default=None, description="Shown by the server; ignored.")
    error: str | None = Field(default=None, description="Shown by the server; ignored.")
    followup: int | None = Field(default=None, description="Shown by the server; ignored.")

    # The step as the person wrote it (JSON), for the planner's rules to read as a model's.
    def planned(self) -> dict[str, Any]:
        """The step as the planner's rules read it (what the server shows left out)."""
        return self.model_dump(exclude=set(SHOWN_STEP_FIELDS))


PLAN_EXAMPLES: list[JsonValue] = [
    {"subquestions": [{"id": "q1", "text": "Kelsby bridge vote 1998"}, {"text": "tide mills"}]},
    {
        "goal": "Why did Kelsby keep its bridge?",
        "steps": [
            {
                "id": "s1",
                "description": "Search for: Kelsby bridge vote",
                "tool": WEB_SEARCH,
                "args": {"query": "Kelsby bridge vote"},
                "requires": [],
                "branch": "q1",
                "status": "pending",
            },
            {
                "id": "s2",
                "description": "Read the top 2 results",
                "tool": WEB_FETCH,
                "args": {"from_step": "s1", "top": 2},
                "requires": ["s1"],
            },
            {"id": "s3", "tool": "compose", "args": {}, "requires": ["s1", "s2"]},
        ],
    },
]


class PlanEdit(BaseModel):
    """The plan as the person approves it: its sub-questions in order (or, for those who
    want every step, a whole plan as the planner writes it: ``{goal, steps}``, such as the
    ``goal`` and ``steps`` that ``GET /research/{id}`` shows under ``awaiting``, edited)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": PLAN_EXAMPLES})
    goal: str | None = Field(default=None, max_length=200)
    subquestions: list[SubQuestionEdit] | None = None
    steps: list[PlanStepEdit] | None = Field(
        default=None,
        description="A whole plan, ending in one compose step; the fields the server shows "
        "beside a step (branch, status, round, ...) are accepted and ignored.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.subquestions is None) == (self.steps is None):
            raise ValueError("give the plan as {subquestions: [...]} or as {goal, steps: [...]}")
        return self

    @classmethod
    def from_text(cls, text: str) -> PlanEdit:
        """A plan as a person writes it in a file or a text box, the same in the CLI and the
        app: JSON (``{goal, steps}`` as ``GET /research/{id}`` shows them, or
        ``{subquestions}``), or one sub-question a line."""
        if text.lstrip().startswith("{"):
            return cls.model_validate_json(text)
        return cls.from_lines(text)

    @classmethod
    def from_lines(cls, text: str) -> PlanEdit:
        """One sub-question a line, as a person edits them in a text box or a file:
        ``q2: text`` keeps sub-question q2 (edited), a line without an id is a new one."""
        edits = []
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = _LINE_ID.match(line)
            if match:
                edits.append(SubQuestionEdit(id=match["id"].lower(), text=match["text"]))
            else:
                edits.append(SubQuestionEdit(text=line.strip().lstrip("-* ").strip()))
        return cls(subquestions=edits)


class ResearchInput(BaseModel):
    """The answer to a paused run: ``{approve: true}`` or ``{plan}`` for a plan under
    review, ``{answer}`` for a clarifying question, ``{stop: true}`` for either: the run
    writes its report from what was read (nothing yet, at a pause) and ends."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"approve": True},
                *[{"plan": plan} for plan in PLAN_EXAMPLES],
                {"answer": "the river, not the planet"},
                {"stop": True},
            ]
        },
    )
    approve: bool | None = None
    plan: PlanEdit | None = None
    answer: str | None = Field(default=None, max_length=ANSWER_CHARS)
    stop: bool | None = Field(
        default=None, description="true: end the run; its report says what was read."
    )

    @model_validator(mode="after")
    def _one(self) -> Self:
        _one_of(self, ("approve", "plan", "answer", "stop"))
        if self.approve is False:
            raise ValueError("approve must be true: to change the plan send {plan}")
        if self.stop is False:
            raise ValueError("stop must be true: to go on, send {approve}, {plan} or {answer}")
        return self

    @property
    def waits_for(self) -> WaitsFor:
        """What this input answers."""
        return "answer" if self.answer is not None else "plan"


class Steer(BaseModel):
    """A say to a running run, applied at its next step boundary: free ``text`` for the
    planner and the report, ``add`` a sub-question, ``drop`` one (its sources left out),
    ``stop`` one branch (its sources kept) or ``stop: "run"`` to write from what was read."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(default=None, min_length=1, max_length=ANSWER_CHARS)
    add: str | None = Field(default=None, min_length=1, max_length=SUBQUESTION_CHARS)
    drop: str | None = Field(default=None, min_length=1, max_length=SUBQUESTION_CHARS)
    stop: str | bool | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        _one_of(self, ("text", "add", "drop", "stop"))
        if self.stop is False:
            raise ValueError('stop takes a sub-question id, or "run" (or true) for the whole run')
        return self

    @property
    def kind(self) -> SteerKind:
        if self.text is not None:
            return "text"
        if self.add is not None:
            return "add"
        return "drop" if self.drop is not None else "stop"

    @property
    def value(self) -> str:
        raw = getattr(self, self.kind)
        return STOP_RUN if raw is True else " ".join(str(raw).split())
