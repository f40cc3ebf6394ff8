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

from local2.research.step_tools import FROM_STEP, MAX_TOP, TOP, StepTools

COMPOSE = "compose"
SEARCH = "web_search"
FETCH = "web_fetch"

# Bounds that keep the worst-case JSON inside a small model's token budget.
GOAL_CHARS = 100
TEXT_CHARS = 80
# A query the fallback makes from the question: room for both names of a long comparison.
RULE_QUERY_CHARS = 160
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


class Clarify(BaseModel):
    """What a first plan may ask before anything runs: one question and its likely readings."""

    model_config = ConfigDict(extra="forbid")
    question: str = ""
    readings: list[str] = Field(default_factory=list)


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    description: str = ""
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)  # as the model wrote them (JSON)
    requires: list[str] = Field(default_factory=list)


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str = ""
    steps: list[PlanStep]
    clarify: Clarify | None = None


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


def _text(limit: int) -> dict[str, Any]:  # a JSON schema document
    return {"type": "string", "maxLength": limit}


CLARIFY_CHARS = 160
READINGS = 4


def clarify_schema() -> dict[str, Any]:  # a JSON schema document
    """The optional ``clarify`` of a first plan: one question and the readings it offers."""
    return {
        "type": "object",
        "properties": {
            "question": _text(CLARIFY_CHARS),
            "readings": {"type": "array", "maxItems": READINGS, "items": _text(TEXT_CHARS)},
        },
        "required": ["question", "readings"],
        "additionalProperties": False,
    }


# a JSON schema document, for the model's constrained decoding
def plan_schema(tools: StepTools, max_steps: int, clarify: bool = False) -> dict[str, Any]:
    """The JSON schema a plan is requested with (only ``tools`` plus ``compose``); with
    ``clarify``, the plan may instead ask the person one question first."""
    ids = {"type": "string", "maxLength": ID_CHARS}
    schema: dict[str, Any] = {  # a JSON schema document
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
                        "tool": {"type": "string", "enum": [*tools.names(), COMPOSE]},
                        "args": tools.args_schema(TEXT_CHARS, URL_CHARS),
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
    if clarify:
        schema["properties"]["clarify"] = clarify_schema()
    return schema


# a JSON schema document
def gaps_schema(max_gaps: int, title: str = "ResearchGaps") -> dict[str, Any]:
    """The JSON schema of the search queries asked for after a round (or for a follow-up)."""
    return {
        "title": title,
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


def step_args(step: PlanStep) -> dict[str, Any]:  # as the model wrote them, Nones left out
    return {k: v for k, v in step.args.items() if v is not None}


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
    tools: StepTools,
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


def _check_args(step: PlanStep, tools: StepTools, known: Mapping[str, str]) -> list[str]:
    args = step_args(step)
    if step.tool == COMPOSE:
        return []
    tool = tools.get(step.tool)
    if tool is None:
        return [f"unknown tool {step.tool!r} (known: {', '.join([*tools.names(), COMPOSE])})"]
    for name, value in args.items():
        if isinstance(value, str) and _PLACEHOLDER.search(value):
            return [f"args.{name} {value!r} is a placeholder, not a real value"]
    query = args.get("query")
    if tool.finder and isinstance(query, str) and query.strip().lower() in _TEMPLATE_QUERIES:
        return [f"args.query {query!r} is a placeholder, not a search query"]
    if tool.target and args.get(tool.target) and args.get(FROM_STEP):
        return [f"a {step.tool} step takes args.{tool.target} or args.from_step, not both"]
    problems = tools.check(step.tool, args)
    if problems:
        if tool.target and not args.get(tool.target) and not args.get(FROM_STEP):
            finders = " or ".join(f.name for f in tools.finders()) or "finder"
            return [
                f"a {step.tool} step needs args.{tool.target}, or args.from_step naming a "
                f"{finders} step"
            ]
        return problems
    source = args.get(FROM_STEP)
    if source is None:
        return []
    finder = tools.get(known.get(str(source), ""))
    readable = [f.name for f in tools.finders() if f.finds_urls == tool.takes_urls]
    if finder is None or not finder.finder:
        return [f"args.from_step {source!r} is not an earlier {' or '.join(readable)} step"]
    if finder.finds_urls != tool.takes_urls:
        return [
            f"args.from_step {source!r}: {step.tool} cannot read what {finder.name} finds "
            f"(it reads what {' or '.join(readable) or 'no finder'} finds)"
        ]
    if source not in step.requires:
        return [f"args.from_step {source!r} must also be listed in requires"]
    top = args.get(TOP)
    if top is not None and not (isinstance(top, int) and 1 <= top <= MAX_TOP):
        return [f"args.top must be 1 to {MAX_TOP}"]
    return []


def renumber(plan: Plan, start: int) -> Plan:
    """Give the plan's steps run-wide ids ``s<start>``, ``s<start+1>``... (references follow)."""
    mapping = {step.id: f"s{start + i}" for i, step in enumerate(plan.steps)}
    steps = []
    for step in plan.steps:
        args = dict(step.args)
        if isinstance(args.get(FROM_STEP), str):
            args[FROM_STEP] = mapping.get(args[FROM_STEP], args[FROM_STEP])
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


def rule_query(text: str, limit: int = RULE_QUERY_CHARS) -> str:
    """``text`` as one search query of at most ``limit`` characters, cut between words so
    no name is searched half."""
    query = " ".join(text.split())
    if len(query) <= limit:
        return query
    cut = query[: limit + 1].rsplit(" ", 1)[0]
    return cut if cut and len(cut) <= limit else query[:limit]


def subquestion_steps(
    query: str, tools: StepTools, read_top: int, first_id: int, forbidden: Sequence[str] = ()
) -> list[PlanStep]:
    """One sub-question's steps as a plan made without the model: search for ``query``, then
    read the top results; nothing when that search is forbidden or no tool can search."""
    query = rule_query(query)
    search = tools.search()
    if search is None or not query or call_key(search.name, {"query": query}) in set(forbidden):
        return []
    found = PlanStep(
        id=f"f{first_id}",
        description=f"Search for: {query}"[:TEXT_CHARS],
        tool=search.name,
        args={"query": query},
    )
    reader = tools.reader_for(search)
    if reader is None:
        return [found]
    read = PlanStep(
        id=f"f{first_id + 1}",
        description=f"Read the top {read_top} results of that search",
        tool=reader.name,
        args={FROM_STEP: found.id, TOP: read_top},
        requires=[found.id],
    )
    return [found, read]


def compose_step(step_id: str, requires: Sequence[str]) -> PlanStep:
    return PlanStep(
        id=step_id,
        description="Write the report from the sources gathered",
        tool=COMPOSE,
        requires=list(requires),
    )


def fallback_plan(
    queries: Sequence[str],
    tools: StepTools,
    read_top: int,
    forbidden: Sequence[str] = (),
    goal: str = "",
) -> Plan:
    """Search each query, read its top results, compose; what is forbidden or missing is
    left out, and with nothing left this is the plan that calls no tools."""
    steps: list[PlanStep] = []
    for query in queries:
        steps += subquestion_steps(query, tools, read_top, len(steps) + 1, forbidden)
    steps.append(compose_step(f"f{len(steps) + 1}", [s.id for s in steps]))
    return Plan(goal=goal or (queries[0] if queries else "Answer the question"), steps=steps)
