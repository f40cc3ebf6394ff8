"""The research plan, in one place: what a plan is, the rules it keeps, its sub-questions as
the person edits them, and how a model is asked for it.

- **The plan** (``{goal, steps: [{id, description, tool, args, requires}]}``, ending in one
  ``compose`` step): its small, bounded JSON schema (what the model is constrained to), the
  rules a schema cannot say (:func:`check_plan`), and the deterministic fallback plans.
- **Asking for it**: with the schema, one repair, then the fallback
  (:func:`ask_structured`); a model that failed its schema once in a run is not asked again
  (:func:`gave_up`).
- **Sub-questions**: the run's steps grouped by what they look into, as the person sees,
  edits (:func:`apply_edit`) and steers them, and the step records a plan becomes
  (:func:`adopt`).
- **Why a fallback was used**, in one sentence for the person (:func:`fallback_words`).

The ``plan`` and ``replan`` nodes that use all of this are in :mod:`local2.research._planner`,
with the pauses that wait for the person.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import jsonschema
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from local2 import events
from local2.config import ResearchSettings
from local2.contracts import (
    WEB_FETCH,
    WEB_SEARCH,
    PlanAttempt,
    PlanEdit,
    PlannedStep,
    PlanRecord,
    ShownStep,
    SubQuestion,
    SubQuestionView,
)
from local2.graph import Services, call_model, event
from local2.models import thinking_and_answer
from local2.research._state import (
    FROM_STEP,
    MAX_TOP,
    TOP,
    ResearchState,
    ResearchUpdate,
    StepRecord,
    StepTools,
)

# --- structured -------------------------------------------------------------------------
# Structured output that never loops: ask with a JSON schema, repair once, then give up.
#
# The schema goes to the backend's constrained decoding (Ollama's ``format``; llama.cpp's
# JSON-schema grammar for the embedded model; ``response_format`` for OpenAI-compatible
# servers), so a valid reply is the normal case even for a small model. What still fails to
# parse or breaks a rule gets exactly one repair message; after that the caller takes its
# deterministic fallback. Every attempt is recorded for the payload and the benchmark.

T = TypeVar("T")
Validator = Callable[[Any], tuple[T | None, list[str]]]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass
class Attempt:
    raw: str
    schema_valid: bool  # the reply was JSON matching the schema
    errors: list[str] = field(default_factory=list)  # why it was not accepted ([] = accepted)
    # Where the JSON broke the schema (e.g. a description over its length): the validator
    # may still accept it, so a reply can be accepted and not schema-valid.
    schema_errors: list[str] = field(default_factory=list)
    accepted: bool = False


@dataclass
class Structured(Generic[T]):
    """The accepted value (None: use the fallback) and how it was obtained."""

    value: T | None
    attempts: list[Attempt]

    @property
    def source(self) -> str:
        """``model`` (first reply), ``repaired`` (after the repair message) or ``fallback``."""
        if self.value is None:
            return "fallback"
        return "model" if len(self.attempts) == 1 else "repaired"

    def summary(self) -> list[PlanAttempt]:
        return [
            {
                "accepted": a.accepted,
                "schema_valid": a.schema_valid,
                "schema_errors": a.schema_errors,
                "errors": a.errors,
                "chars": len(a.raw),
            }
            for a in self.attempts
        ]


def _is(model: Any, class_name: str) -> bool:
    return any(c.__name__ == class_name for c in type(model).__mro__)


def bind_schema(model: Any, schema: dict[str, Any], max_tokens: int) -> Any:  # a JSON schema
    """``model`` constrained to ``schema`` in the way its backend understands."""
    if _is(model, "ChatOllama"):
        return model.bind(format=schema)
    envelope = {
        "type": "json_schema",
        "json_schema": {"name": schema.get("title", "output"), "schema": schema, "strict": True},
    }
    if _is(model, "EmbeddedChatModel"):
        # Room for the whole grammar-bounded document, so it is never cut off mid-way.
        return model.bind(response_format=envelope, max_tokens=max_tokens)
    return model.bind(response_format=envelope)


def decode_json(text: str) -> tuple[Any, str | None]:
    """The JSON document in a reply (code fences and surrounding prose tolerated)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        first = body.find("{")
        last = body.rfind("}")
        if 0 <= first < last:
            try:
                return json.loads(body[first : last + 1]), None
            except json.JSONDecodeError:
                pass
        return None, f"the reply is not valid JSON ({exc.msg} at position {exc.pos})"


def schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:  # a JSON schema document

    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or 'document'}: {e.message}"[:200]
        for e in validator.iter_errors(data)
    ][:6]


def repair_prompt(errors: list[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors[:8])
    return (
        "That reply cannot be used:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON document, following the same schema."
    )


def ask_structured(
    services: Services,
    messages: list[BaseMessage],
    schema: dict[str, Any],  # a JSON schema document
    validate: Validator[T],
    config: RunnableConfig | None = None,
) -> Structured[T]:
    """Ask for JSON matching ``schema``; accept what ``validate`` accepts; one repair at most."""
    bound = bind_schema(
        services.chat_model, schema, services.settings.research.structured_max_tokens
    )
    asking = dataclasses.replace(services, chat_model=bound)
    attempts: list[Attempt] = []
    conversation = list(messages)
    for _ in range(2):  # the request, then one repair
        reply = call_model(asking, conversation, config or {}, tools=False)
        _thinking, text = thinking_and_answer(reply)
        data, problem = decode_json(text)
        if problem is not None:
            attempts.append(Attempt(text, False, [problem]))
        else:
            broken = schema_errors(data, schema)
            value, errors = validate(data)
            accepted = value is not None and not errors
            attempts.append(Attempt(text, not broken, errors, broken, accepted))
            if accepted:
                return Structured(value, attempts)
        conversation += [AIMessage(text), HumanMessage(repair_prompt(attempts[-1].errors))]
    return Structured(None, attempts)


# --- plan_schema ------------------------------------------------------------------------
# The research plan: its JSON schema, the rules a plan must keep, and the fallback plans.
#
# A plan is ``{goal, steps: [{id, description, tool, args, requires}]}`` ending in one
# ``compose`` step. The JSON schema is what the model is constrained to (Ollama ``format``,
# llama.cpp's grammar), kept small and bounded so even a 135M model finishes it within its
# token budget; :func:`check_plan` then enforces what a schema cannot say: known tools, no
# placeholders, ``requires`` pointing backwards, a step cap, no forbidden call.

COMPOSE = "compose"
SEARCH = WEB_SEARCH
FETCH = WEB_FETCH

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


# --- gave_up ----------------------------------------------------------------------------
# A run stops asking a model that failed its schema: the rule answers the later rounds.
#
# When the plan or the gaps reply of a run's model fails its schema after its one repair, the
# same model is unlikely to do better a round later, and each attempt costs a model reply. So
# the run remembers that model (``schema_failed`` in its state), and its later plans and
# reflections take the deterministic rule at once, saying so in the event log. The replan
# after a failed step keeps asking: it is a different request, with the failure to go on.

SKIPPED = "the model failed its schema earlier in this run"


def gave_up(state: Mapping[str, Any], services: Services) -> bool:
    """This run's model has already failed a plan or gaps schema (after its repair)."""
    failed = state.get("schema_failed")
    return failed is not None and failed == services.model_name


def remember(asked: Structured[Any], services: Services) -> ResearchUpdate:
    """The state update that remembers a model which failed its schema (nothing otherwise)."""
    return {"schema_failed": services.model_name} if asked.value is None and asked.attempts else {}


def skipped() -> Structured[Any]:
    """What asking gives when the model is not asked: no value, no attempts."""
    return Structured(None, [])


# --- subquestions -----------------------------------------------------------------------
# Sub-questions: a run's steps grouped by what they look into, as the person sees, edits and
# steers them (named apart from the checkpoint branches of :mod:`local2.graph.branches`).
#
# A step that builds on no earlier search or read starts a sub-question, written as its query
# (or its description); a step that requires it (reading its results) is on that
# sub-question. A step record keeps its sub-question's id under the key ``branch`` (the name
# runs were checkpointed with, and the API shows; an edited plan sent back may carry it, or
# ``subquestion``: both are ignored, :class:`~local2.contracts._research_input.PlanStepEdit`).
# The plan under review is shown as its sub-questions; the person's edit
# (:class:`~local2.contracts._research_input.PlanEdit`) keeps, rewrites, removes, adds and
# reorders them, and :func:`apply_edit` turns it into exactly the steps that will run: a kept
# sub-question keeps its steps (a rewritten one searches its new words), a new one searches
# and reads its top results, a removed one's steps are gone.

REMOVED = "removed"  # taken out of the plan before it ran
REPLACED = "replaced"  # a replan replaced its steps before they ran


def new_record(step: PlanStep, round_n: int, branch: str | None, followup: int = 0) -> StepRecord:
    return StepRecord(
        id=step.id,
        description=step.description,
        tool=step.tool,
        args={k: v for k, v in step.args.items() if v is not None},
        requires=list(step.requires),
        round=round_n,
        status="pending",
        error=None,
        calls=[],
        found=[],
        duration_s=0.0,
        branch=branch,
        followup=followup,
    )


def _text_of(step: StepRecord) -> str:
    query = step["args"].get("query")
    text = query if isinstance(query, str) and query.strip() else step.get("description") or ""
    return " ".join(str(text).split())[:TEXT_CHARS] or step["tool"]


def _next_q(subs: Sequence[SubQuestion]) -> int:
    numbers = [int(q["id"][1:]) for q in subs if re.fullmatch(r"q\d+", q["id"])]
    return max(numbers, default=0) + 1


def attach(
    subs: Sequence[SubQuestion],
    steps: Mapping[str, StepRecord],
    new: Sequence[StepRecord],
    origin: str,
    round_n: int,
) -> list[SubQuestion]:
    """Put each of ``new`` on a sub-question (its first prerequisite's, or a new one);
    returns the sub-questions with the new ones added."""
    owner = {i: s.get("branch") for i, s in steps.items()}
    out = list(subs)
    for record in new:
        if record["tool"] == COMPOSE:
            record["branch"] = None
            continue
        parent = next((owner[r] for r in record["requires"] if owner.get(r)), None)
        if parent is None:
            parent = f"q{_next_q(out)}"
            out.append(
                SubQuestion(
                    id=parent, text=_text_of(record), status="open", round=round_n, origin=origin
                )
            )
        record["branch"] = parent
        owner[record["id"]] = parent
    return out


def retire_empty(subs: Sequence[SubQuestion], steps: Mapping[str, Any]) -> list[SubQuestion]:
    """Open sub-questions left with no step (a replan replaced them) are marked so."""
    used = {s.get("branch") for s in steps.values() if s is not None}
    return [
        {**q, "status": REPLACED} if q["status"] == "open" and q["id"] not in used else q
        for q in subs
    ]


def planned(step: StepRecord) -> PlannedStep:
    """A step as a plan lists it."""
    return {
        "id": step.get("id"),
        "tool": step.get("tool"),
        "args": step.get("args"),
        "description": step.get("description"),
        "requires": step.get("requires"),
        "branch": step.get("branch"),
    }


def plan_view(state: ResearchState) -> tuple[list[SubQuestionView], list[ShownStep]]:
    """The plan as the person reviews it: its sub-questions (with their steps' ids) and its
    steps, in the order they would run."""
    steps = state.get("steps") or {}
    rows: list[ShownStep] = []
    by_question: dict[str, list[str]] = {}
    for i in state.get("order") or []:
        step = steps.get(i)
        if step is None:
            continue
        rows.append({**planned(step), "status": step.get("status")})
        if step.get("branch"):
            by_question.setdefault(str(step["branch"]), []).append(i)
    subs: list[SubQuestionView] = [
        {**q, "steps": by_question.get(q["id"], [])}
        for q in state.get("subquestions") or []
        if q["id"] in by_question
    ]
    return subs, rows


def next_step_number(state: ResearchState) -> int:
    """The number of the next new step: ids are never used twice in a run, not even those
    of steps removed before they ran."""
    ids = [int(i[1:]) for i in state.get("order") or [] if re.fullmatch(r"s\d+", i)]
    return max([*ids, state.get("last_step") or 0]) + 1


def new_subquestion(
    state: ResearchState,
    text: str,
    tools: StepTools,
    settings: ResearchSettings,
    first: int,
    forbidden: Sequence[str] = (),
) -> list[StepRecord]:
    """The steps of a sub-question the person added (search its words, read the top
    results), numbered from ``s<first>``; a search already done is read further instead of
    repeated."""
    round_n = state.get("round") or 1
    planned = subquestion_steps(text, tools, settings.read_top, 1, forbidden)
    done = {
        (s["tool"], " ".join(str(s["args"].get("query", "")).lower().split())): i
        for i, s in (state.get("steps") or {}).items()
        if s.get("status") == "done"
    }
    ids = {p.id: f"s{first + n}" for n, p in enumerate(planned)}
    records: list[StepRecord] = []
    for step in planned:
        key = (step.tool, " ".join(str(step.args.get("query", "")).lower().split()))
        if key in done:  # searched already: its results are read further, nothing repeated
            ids[step.id] = done[key]
            continue
        args = dict(step.args)
        if "from_step" in args:
            args["from_step"] = ids[str(args["from_step"])]
        renamed = step.model_copy(
            update={"id": ids[step.id], "args": args, "requires": [ids[r] for r in step.requires]}
        )
        records.append(new_record(renamed, round_n, None))
    return records


def _plan_of(records: Sequence[StepRecord], goal: str) -> Plan:
    steps = [
        PlanStep(
            id=r["id"],
            description=r.get("description") or "",
            tool=r["tool"],
            args=dict(r["args"]),
            requires=list(r["requires"]),
        )
        for r in records
    ]
    return Plan(goal=goal, steps=steps)


def _plain(errors: Sequence[str], max_steps: int) -> list[str]:
    """The plan's rule errors in the person's terms where they have some."""
    out = []
    for error in errors:
        if "steps; at most" in error:
            out.append(
                f"{error}: remove a sub-question (each adds a search and a read) or raise "
                f"research.max_steps ({max_steps})"
            )
        elif "needs at least one step" in error:
            out.append("no sub-question is left: keep or add at least one")
        else:
            out.append(error)
    return out


def apply_edit(
    state: ResearchState, edit: PlanEdit, tools: StepTools, settings: ResearchSettings
) -> tuple[ResearchUpdate, list[str]]:
    """The update that makes the pending plan exactly ``edit``, or the reasons it cannot
    (the plan then stays as it was, and the run stays paused)."""
    if edit.steps is not None:
        return _whole_plan(state, edit, tools, settings)
    steps = state.get("steps") or {}
    order = list(state.get("order") or [])
    pending = [i for i in order if steps[i]["status"] == "pending"]
    finished = [i for i in order if i not in pending]
    draft = _draft(state, edit, tools, settings, pending)
    _close(state, draft, pending)
    earlier = {i: steps[i]["tool"] for i in finished if steps[i]["status"] == "done"}
    plan = _plan_of([draft.records[i] for i in draft.kept], state.get("goal") or "")
    errors = draft.errors + check_plan(
        plan, tools, settings.max_steps, state.get("forbidden") or [], earlier
    )
    if errors:
        return {}, _plain(errors, settings.max_steps)
    return _edited(state, edit, draft, pending, finished), []


@dataclass
class _Draft:
    """What the edit's sub-questions make so far: their steps in order, the sub-questions,
    and why some cannot be."""

    first: int  # the next step's number
    records: dict[str, StepRecord] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    subquestions: list[SubQuestion] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _draft(
    state: ResearchState,
    edit: PlanEdit,
    tools: StepTools,
    settings: ResearchSettings,
    pending: list[str],
) -> _Draft:
    """Each listed sub-question keeps its pending steps, or gets new ones."""
    steps = state.get("steps") or {}
    subs = {q["id"]: q for q in state.get("subquestions") or []}
    draft = _Draft(first=next_step_number(state))
    seen: set[str] = set()
    for n, item in enumerate(edit.subquestions or [], start=1):
        known = subs.get(item.id or "")
        if item.id and known is None:
            draft.errors.append(
                f"sub-question {n}: there is no {item.id!r}; leave the id out for a new one"
            )
            continue
        if known is not None:
            if known["id"] in seen:
                draft.errors.append(f"sub-question {n}: {known['id']} is listed twice")
                continue
            seen.add(known["id"])
            if _keep_subquestion(draft, steps, pending, known, item.text):
                continue
        _add_subquestion(draft, state, subs, known, item.text, n, tools, settings)
    return draft


def _keep_subquestion(
    draft: _Draft,
    steps: Mapping[str, StepRecord],
    pending: list[str],
    known: SubQuestion,
    text: str,
) -> bool:
    """Keep ``known``'s pending steps (its search searching ``text`` now); False when it
    has none, or it is rewritten and none of them searches."""
    own = [i for i in pending if steps[i].get("branch") == known["id"]]
    finder = next((i for i in own if "query" in steps[i]["args"]), None)
    if not own or (text != known["text"] and finder is None):
        return False
    for i in own:
        record = copy.copy(steps[i])
        if i == finder and text != known["text"]:
            record["args"] = {**record["args"], "query": text[:TEXT_CHARS]}
        draft.records[i] = record
    draft.kept += own
    draft.subquestions.append({**known, "text": text, "status": "open"})
    return True


def _add_subquestion(
    draft: _Draft,
    state: ResearchState,
    subs: Mapping[str, SubQuestion],
    known: SubQuestion | None,
    text: str,
    n: int,
    tools: StepTools,
    settings: ResearchSettings,
) -> None:
    """New steps for sub-question ``n`` (``known``'s, or a new one)."""
    qid = known["id"] if known is not None else f"q{_next_q([*subs.values(), *draft.subquestions])}"
    added = new_subquestion(state, text, tools, settings, draft.first)
    if not added:
        draft.errors.append(f"sub-question {n}: nothing can search for {text!r} here")
        return
    draft.first += len(added)
    for record in added:
        record["branch"] = qid
        draft.records[record["id"]] = record
    draft.kept += [r["id"] for r in added]
    origin = known["origin"] if known is not None else "person"
    round_n = state.get("round") or 1
    draft.subquestions.append(
        SubQuestion(id=qid, text=text, status="open", round=round_n, origin=origin)
    )


def _close(state: ResearchState, draft: _Draft, pending: list[str]) -> None:
    """The composing step closes the draft, requiring every step kept before it (a plan
    given before any was made gets one)."""
    steps = state.get("steps") or {}
    compose = next((i for i in pending if steps[i]["tool"] == COMPOSE), None)
    if compose is None:  # a plan given before any was made
        compose = f"s{draft.first}"
        draft.first += 1
        draft.records[compose] = new_record(
            compose_step(compose, []), state.get("round") or 1, None
        )
    closing = copy.copy(draft.records.get(compose) or steps[compose])
    closing["requires"] = list(draft.kept)
    draft.records[compose] = closing
    draft.kept.append(compose)


def _edited(
    state: ResearchState, edit: PlanEdit, draft: _Draft, pending: list[str], finished: list[str]
) -> ResearchUpdate:
    """The update for a draft that passed the planner's rules: the steps it drops are gone,
    the sub-questions it leaves out removed, and the plan recorded as the person's."""
    subs = {q["id"]: q for q in state.get("subquestions") or []}
    removed = {i: None for i in pending if i not in draft.records}
    listed = {q["id"] for q in draft.subquestions}
    others: list[SubQuestion] = [
        {**q, "status": REMOVED} if q["status"] == "open" else q
        for q in subs.values()
        if q["id"] not in listed
    ]
    update: ResearchUpdate = {
        "steps": {**removed, **{i: draft.records[i] for i in draft.kept}},
        "order": finished + draft.kept,
        "subquestions": draft.subquestions + others,
        "last_step": draft.first - 1,
    }
    goal = edit.goal or state.get("goal") or state["question"]
    return {**update, **_recorded(state, [draft.records[i] for i in draft.kept], goal)}


def _recorded(state: ResearchState, records: Sequence[StepRecord], goal: str) -> ResearchUpdate:
    """The plan the person approved, in the run's plans and its event log."""
    round_n = state.get("round") or 1
    summary = plan_summary(records)
    entry = event(
        state, events.RESEARCH_PLAN, round=round_n, origin="person", goal=goal, steps=summary
    )
    record: PlanRecord = {
        "round": round_n,
        "origin": "person",
        "reason": "the person's plan",
        "goal": goal,
        "steps": summary,
        "attempts": [],
    }
    return {"goal": goal, "plans": [record], "event_log": [entry], "decision": ""}


def plan_summary(records: Sequence[StepRecord]) -> list[PlannedStep]:
    """The steps as a plan's event and record list them."""
    return [planned(r) for r in records]


def _whole_plan(
    state: ResearchState, edit: PlanEdit, tools: StepTools, settings: ResearchSettings
) -> tuple[ResearchUpdate, list[str]]:
    """A whole plan the person wrote (``{goal, steps}``), under the planner's rules."""
    written = [s.planned() for s in edit.steps or []]  # what the server shows is ignored
    plan, errors = parse_plan({"goal": edit.goal or state.get("goal") or "", "steps": written})
    if plan is None:
        return {}, [f"plan.{e}" for e in errors]
    steps = state.get("steps") or {}
    earlier = {i: s["tool"] for i, s in steps.items() if s.get("status") == "done"}
    problems = check_plan(plan, tools, settings.max_steps, state.get("forbidden") or [], earlier)
    if problems:
        return {}, _plain(problems, settings.max_steps)
    update = adopt(state, plan, "person", None, "the person's plan")
    return {**update, "goal": plan.goal or update["goal"]}, []  # the goal as they wrote it


def adopt(
    state: ResearchState,
    plan: Plan,
    origin: str,
    asked: Structured[Plan] | None,
    reason: str,
    followup: int = 0,
    model_skipped: str | None = None,
    why: str | None = None,
    detail: str = "",
) -> ResearchUpdate:
    """Replace the pending steps by ``plan``'s, renumbered after every step so far and put
    on their sub-questions (new ones where they start one); ``model_skipped`` says why
    the model was not asked for it (:func:`gave_up`), ``why`` why a rule's
    plan (a fallback) was used, in words for the person, ``detail`` what was wrong with the
    model's plan in the planner's words (:func:`fallback_words`)."""
    steps = state.get("steps") or {}
    order = list(state.get("order") or [])
    round_n = state.get("round") or 1
    start = next_step_number(state)
    plan = renumber(plan, start=start)
    dropped = {i: None for i, s in steps.items() if s.get("status") == "pending"}
    new = [new_record(step, round_n, None, followup) for step in plan.steps]
    kept = {i: s for i, s in steps.items() if i not in dropped}
    subs = attach(state.get("subquestions") or [], kept, new, origin, round_n)
    records: dict[str, StepRecord | None] = {**dropped, **{r["id"]: r for r in new}}
    order = [i for i in order if i not in dropped] + [s.id for s in plan.steps]
    summary = plan_summary(new)
    skipped: dict[str, str] = {"model_skipped": model_skipped} if model_skipped else {}
    if why:
        skipped["why"] = why
    if detail:
        skipped["why_detail"] = detail
    entry = event(
        state,
        events.RESEARCH_PLAN,
        round=round_n,
        origin=origin,
        goal=plan.goal,
        steps=summary,
        **skipped,
    )
    record: PlanRecord = {
        "round": round_n,
        "origin": origin,
        "reason": reason,
        "goal": plan.goal,
        "steps": summary,
        "attempts": asked.summary() if asked is not None else [],
    }
    if model_skipped:  # first, as the event has it
        record = {"model_skipped": model_skipped, **record}
    if why:
        record["why"] = why
    if detail:
        record["why_detail"] = detail
    return {
        "goal": state.get("goal") or plan.goal,
        "steps": records,
        "order": order,
        "subquestions": retire_empty(subs, {**kept, **{r["id"]: r for r in new}}),
        "plans": [record],
        "decision": "",
        "event_log": [entry],
        "last_step": start + len(plan.steps) - 1,
    }


# --- plan_words: why the rule's plan was used, in the person's words ---------------
# The planner's own reasons are written for whoever debugs a plan ("step 's1': web_search
# reads no results of another step: it takes no args.from_step"). A person reads one
# sentence instead (:func:`fallback_words`): the kind of mistake, and that a standard plan
# was used; the planner's words stay in the plan's record (``why_detail``) and event.

# The planner's reasons (research/_plan.py, research/_state.py, and
# research/_plan.py's JSON and schema checks), each as a kind of mistake; the first
# pattern that matches names it.
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"not valid JSON", re.I), "its reply was not a plan in the form asked for"),
    (re.compile(r"placeholder", re.I), "a step searched for a placeholder, not real words"),
    (re.compile(r"\bneeds args\.", re.I), "a step lacked what its tool needs"),
    (
        re.compile(r"from_step .* is not an earlier|must also be listed in requires", re.I),
        "a step read the results of a step that does not come before it",
    ),
    (
        re.compile(r"reads no results of another step|cannot read what|not both", re.I),
        "a step used another step's results in a way its tool cannot",
    ),
    (re.compile(r"unknown tool", re.I), "a step named a tool that does not exist"),
    (re.compile(r"steps; at most", re.I), "it had more steps than a plan may have"),
    (
        re.compile(r"last step must use|only the last step may be", re.I),
        "it did not end by writing the report",
    ),
    (re.compile(r"searches or reads", re.I), "it neither searched nor read anything"),
    (
        re.compile(r"requires '|require itself|used twice", re.I),
        "its steps were not in an order that can run",
    ),
    (
        re.compile(r"failed before and is forbidden|repeats step", re.I),
        "it repeated a search already made or already failed",
    ),
    (
        re.compile(r"args\.|takes no args|http\(s\) URL", re.I),
        "a step gave its tool details it cannot use",
    ),
)
STANDARD = "so a standard plan was used"


def mistake(detail: str) -> str:
    """The kind of mistake a planner's reason names, in plain words."""
    for pattern, said in _KINDS:
        if pattern.search(detail):
            return said
    return "it did not follow the rules for a plan"


def fallback_words(detail: str) -> str:
    """One sentence for the person: the model's plan, what was wrong with it, and what
    was done instead (``detail``: the planner's first reason, "" when none was given)."""
    if not detail:
        return f"The model's plan could not be used, {STANDARD}."
    return f"The model's plan could not be used ({mistake(detail)}), {STANDARD}."
