"""The research plan: its JSON schema, the rules a plan must keep, and the fallback plans.

A plan is ``{goal, steps: [{id, description, tool, args, requires}]}`` ending in one
``compose`` step. The JSON schema is what the model is constrained to (Ollama ``format``,
llama.cpp's grammar), kept small and bounded so even a 135M model finishes it within its
token budget; :func:`check_plan` then enforces what a schema cannot say: known tools, no
placeholders, ``requires`` pointing backwards, a step cap, no forbidden call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

COMPOSE = "compose"
SEARCH = "web_search"
FETCH = "web_fetch"
RESEARCH_TOOLS = (SEARCH, FETCH)  # read-only: research never causes effects
MAX_TOP = 5

# Bounds that keep the worst-case JSON inside a small model's token budget.
GOAL_CHARS = 100
TEXT_CHARS = 80
URL_CHARS = 300
ID_CHARS = 8

_PLACEHOLDER = re.compile(
    r"<[^<>]{0,40}>|\{[^{}]{0,40}\}|\[(?:url|link|query|topic)[^\]]{0,20}\]|\.\.\.|…"
    r"|\b(?:TODO|TBD|PLACEHOLDER|XXX)\b|\binsert[_ ]\w+[_ ]here\b"
    r"|\byour[_ -](?:url|query|search|link|topic)\b"
    r"|\b(?:url|link|result)s?[_ ]?(?:from|of)[_ ]?(?:step|the search|search|previous)",
    re.IGNORECASE,
)


_TEMPLATE_QUERIES = frozenset({"a web search query", "a short search query", "search query"})


class StepArgs(BaseModel):
    """Arguments of a step: ``query`` (search), ``url`` or ``from_step`` + ``top`` (read)."""

    model_config = ConfigDict(extra="forbid")
    query: str | None = None
    url: str | None = None
    from_step: str | None = None
    top: int | None = None


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    description: str = ""
    tool: str
    args: StepArgs = Field(default_factory=StepArgs)
    requires: list[str] = Field(default_factory=list)


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str = ""
    steps: list[PlanStep]


class Gap(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1)

    @field_validator("query")
    @classmethod
    def _real(cls, value: str) -> str:
        if _PLACEHOLDER.search(value) or value.strip().lower() in _TEMPLATE_QUERIES:
            raise ValueError(f"{value!r} is a placeholder, not a search query")
        return value


class Gaps(BaseModel):
    """What the model says is still missing, as follow-up search queries."""

    model_config = ConfigDict(extra="forbid")
    gaps: list[Gap] = Field(default_factory=list)


def _text(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


def plan_schema(tools: Sequence[str], max_steps: int) -> dict[str, Any]:
    """The JSON schema a plan is requested with (only ``tools`` plus ``compose``)."""
    ids = {"type": "string", "maxLength": ID_CHARS}
    return {
        "title": "ResearchPlan",
        "type": "object",
        "properties": {
            "goal": _text(GOAL_CHARS),
            "steps": {
                "type": "array",
                "minItems": 2,
                "maxItems": max_steps,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": ids,
                        "description": _text(TEXT_CHARS),
                        "tool": {"type": "string", "enum": [*tools, COMPOSE]},
                        "args": {
                            "type": "object",
                            "properties": {
                                "query": _text(TEXT_CHARS),
                                "url": _text(URL_CHARS),
                                "from_step": ids,
                                "top": {"type": "integer", "enum": list(range(1, MAX_TOP + 1))},
                            },
                            "additionalProperties": False,
                        },
                        "requires": {"type": "array", "items": ids, "maxItems": max_steps},
                    },
                    "required": ["id", "description", "tool", "args", "requires"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["goal", "steps"],
        "additionalProperties": False,
    }


def gaps_schema(max_gaps: int) -> dict[str, Any]:
    """The JSON schema of the follow-up queries asked for after a round."""
    return {
        "title": "ResearchGaps",
        "type": "object",
        "properties": {
            "gaps": {
                "type": "array",
                "maxItems": max_gaps,
                "items": {
                    "type": "object",
                    "properties": {"query": _text(TEXT_CHARS)},
                    "required": ["query"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["gaps"],
        "additionalProperties": False,
    }


def call_key(tool: str, args: Mapping[str, Any]) -> str:
    """A canonical text for a tool call, so a forbidden call is recognised however written."""
    clean = {k: (v.strip() if isinstance(v, str) else v) for k, v in args.items() if v is not None}
    if isinstance(clean.get("query"), str):
        clean["query"] = " ".join(clean["query"].lower().split())
    return f"{tool} {json.dumps(clean, sort_keys=True, ensure_ascii=False)}"


def step_args(step: PlanStep) -> dict[str, Any]:
    return step.args.model_dump(exclude_none=True)


def parse_plan(data: Any) -> tuple[Plan | None, list[str]]:
    """``data`` (decoded JSON) as a :class:`Plan`, or the reasons it is not one."""
    try:
        return Plan.model_validate(data), []
    except ValidationError as exc:
        return None, [
            f"{'.'.join(str(p) for p in e['loc']) or 'plan'}: {e['msg']}" for e in exc.errors()
        ][:8]


def check_plan(
    plan: Plan,
    tools: Sequence[str],
    max_steps: int,
    forbidden: Sequence[str] = (),
    earlier: Mapping[str, str] | None = None,
) -> list[str]:
    """What breaks the rules in ``plan``; ``earlier`` maps ids of finished steps to their tool."""
    earlier = dict(earlier or {})
    errors: list[str] = []
    steps = plan.steps
    if len(steps) > max_steps:
        errors.append(f"the plan has {len(steps)} steps; at most {max_steps} are allowed")
    if not steps or steps[-1].tool != COMPOSE:
        errors.append(f"the last step must use the tool {COMPOSE!r}")
    if sum(s.tool == COMPOSE for s in steps) > 1:
        errors.append(f"only the last step may be a {COMPOSE!r} step")
    if not any(s.tool != COMPOSE for s in steps):
        errors.append("the plan needs at least one step that searches or reads")
    seen: dict[str, str] = {}
    calls: dict[str, str] = {}
    banned = set(forbidden)
    for step in steps:
        where = f"step {step.id!r}"
        if step.id in seen:
            errors.append(f"{where}: the id is used twice")
        known = {**earlier, **seen}
        for need in step.requires:
            if need == step.id:
                errors.append(f"{where}: it cannot require itself")
            elif need not in known:
                errors.append(f"{where}: requires {need!r}, which is not an earlier step")
        errors.extend(f"{where}: {e}" for e in _check_args(step, tools, known))
        if step.tool != COMPOSE:
            key = call_key(step.tool, step_args(step))
            if key in banned:
                errors.append(f"{where}: {key} failed before and is forbidden")
            if key in calls:
                errors.append(f"{where}: repeats step {calls[key]!r}")
            calls[key] = step.id
        seen[step.id] = step.tool
    return errors


def _check_args(step: PlanStep, tools: Sequence[str], known: Mapping[str, str]) -> list[str]:
    args = step.args
    if step.tool == COMPOSE:
        return []
    if step.tool not in tools:
        return [f"unknown tool {step.tool!r} (known: {', '.join([*tools, COMPOSE])})"]
    for name, value in step_args(step).items():
        if isinstance(value, str) and _PLACEHOLDER.search(value):
            return [f"args.{name} {value!r} is a placeholder, not a real value"]
    if step.tool == SEARCH:
        if args.query is None or not args.query.strip():
            return ["a web_search step needs args.query"]
        if args.query.strip().lower() in _TEMPLATE_QUERIES:
            return [f"args.query {args.query!r} is a placeholder, not a search query"]
        if args.url or args.from_step:
            return ["a web_search step takes only args.query"]
        return []
    if args.url and args.from_step:
        return ["a web_fetch step takes args.url or args.from_step, not both"]
    if args.url:
        if not re.match(r"(?:https?|corpus)://[^\s/]+", args.url.strip(), re.IGNORECASE):
            return [f"args.url {args.url!r} is not an http(s) URL (or a corpus:// one)"]
        return []
    if not args.from_step:
        return ["a web_fetch step needs args.url, or args.from_step naming a web_search step"]
    if known.get(args.from_step) != SEARCH:
        return [f"args.from_step {args.from_step!r} is not an earlier web_search step"]
    if args.from_step not in step.requires:
        return [f"args.from_step {args.from_step!r} must also be listed in requires"]
    if args.top is not None and not 1 <= args.top <= MAX_TOP:
        return [f"args.top must be 1 to {MAX_TOP}"]
    return []


def renumber(plan: Plan, start: int) -> Plan:
    """Give the plan's steps run-wide ids ``s<start>``, ``s<start+1>``... (references follow)."""
    mapping = {step.id: f"s{start + i}" for i, step in enumerate(plan.steps)}
    steps = []
    for step in plan.steps:
        args = step.args.model_copy()
        if args.from_step:
            args.from_step = mapping.get(args.from_step, args.from_step)
        steps.append(
            step.model_copy(
                update={
                    "id": mapping[step.id],
                    "args": args,
                    "requires": [mapping.get(r, r) for r in step.requires],
                }
            )
        )
    return plan.model_copy(update={"steps": steps})


def fallback_plan(
    queries: Sequence[str],
    tools: Sequence[str],
    read_top: int,
    forbidden: Sequence[str] = (),
    goal: str = "",
) -> Plan:
    """Search each query, read its top results, compose; what is forbidden or missing is
    left out, and with nothing left this is the plan that calls no tools."""
    steps: list[PlanStep] = []
    banned = set(forbidden)
    for query in queries:
        query = " ".join(query.split())[:TEXT_CHARS]
        if SEARCH not in tools or not query or call_key(SEARCH, {"query": query}) in banned:
            continue
        search = PlanStep(
            id=f"f{len(steps) + 1}",
            description=f"Search the web for: {query}"[:TEXT_CHARS],
            tool=SEARCH,
            args=StepArgs(query=query),
        )
        steps.append(search)
        if FETCH in tools:
            steps.append(
                PlanStep(
                    id=f"f{len(steps) + 1}",
                    description=f"Read the top {read_top} results of that search",
                    tool=FETCH,
                    args=StepArgs(from_step=search.id, top=read_top),
                    requires=[search.id],
                )
            )
    steps.append(
        PlanStep(
            id=f"f{len(steps) + 1}",
            description="Write the report from the sources gathered",
            tool=COMPOSE,
            requires=[s.id for s in steps],
        )
    )
    return Plan(goal=goal or (queries[0] if queries else "Answer the question"), steps=steps)
