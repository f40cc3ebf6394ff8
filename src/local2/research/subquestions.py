"""Sub-questions: a run's steps grouped by what they look into, as the person sees, edits and
steers them (named apart from the checkpoint branches of :mod:`local2.graph.branches`).

A step that builds on no earlier search or read starts a sub-question, written as its query
(or its description); a step that requires it (reading its results) is on that
sub-question. A step record keeps its sub-question's id under the key ``branch`` (the name
runs were checkpointed with, and the API shows; an edited plan sent back may carry it, or
``subquestion``: both are ignored, :class:`~local2.contracts._research_input.PlanStepEdit`).
The plan under review is shown as its sub-questions; the person's edit
(:class:`~local2.contracts._research_input.PlanEdit`) keeps, rewrites, removes, adds and
reorders them, and :func:`apply_edit` turns it into exactly the steps that will run: a kept
sub-question keeps its steps (a rewritten one searches its new words), a new one searches
and reads its top results, a removed one's steps are gone.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from local2 import events
from local2.config import ResearchSettings
from local2.contracts import (
    PlanEdit,
    PlannedStep,
    PlanRecord,
    ShownStep,
    SubQuestion,
    SubQuestionView,
)
from local2.graph import event
from local2.research.plan_schema import (
    COMPOSE,
    TEXT_CHARS,
    Plan,
    PlanStep,
    check_plan,
    compose_step,
    parse_plan,
    renumber,
    subquestion_steps,
)
from local2.research.state import ResearchState, ResearchUpdate, StepRecord
from local2.research.step_tools import StepTools
from local2.research.structured import Structured

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
) -> ResearchUpdate:
    """Replace the pending steps by ``plan``'s, renumbered after every step so far and put
    on their sub-questions (new ones where they start one); ``model_skipped`` says why
    the model was not asked for it (:mod:`local2.research.gave_up`), ``why`` why a rule's
    plan (a fallback) was used, in words for the person."""
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
