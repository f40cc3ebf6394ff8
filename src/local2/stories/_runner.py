"""Acceptance stories: load the YAML, run each turn against a live API, check the payloads.

A story is a short conversation (``tests/stories/S*.yaml``). Every turn is posted to
``POST /query`` with the story's own session id, and its turn payload is checked against
what the story expects. The check functions are pure (spec + payload -> reasons it failed),
so they can be tested alone with crafted payloads.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from local2.errors import StoryError

Needle = str | list[str]  # a string, or a list of alternatives of which one must appear


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EventChecks(_Spec):
    present: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    in_order: list[str] = Field(default_factory=list)


class PayloadChecks(_Spec):
    answer_non_empty: bool = False
    thinking_non_empty: bool = False
    tool_calls: Literal["empty", "non_empty"] | None = None
    tool_calls_include: list[str] = Field(default_factory=list)


class TurnSpec(_Spec):
    query: str = Field(min_length=1)
    expected_content: list[Needle] = Field(default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)
    events: EventChecks = Field(default_factory=EventChecks)
    checks: PayloadChecks = Field(default_factory=PayloadChecks)


class Story(_Spec):
    id: str = Field(min_length=1)
    title: str = ""
    requires: list[str] = Field(default_factory=list)  # hints, e.g. "page_server"
    turns: list[TurnSpec] = Field(min_length=1)
    path: Path | None = None


# --------------------------------------------------------------------------- loading


def load_story(path: Path) -> Story:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise StoryError(f"{path}: cannot read the story ({exc})") from None
    if not isinstance(data, dict):
        raise StoryError(f"{path}: a story is a mapping with id, title and turns")
    try:
        return Story.model_validate({**data, "path": path})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "story"
        raise StoryError(f"{path}: {where}: {problem['msg']}") from None


def load_stories(directory: Path, only: Iterable[str] | None = None) -> list[Story]:
    """Every ``*.yaml`` story in ``directory``, sorted by id; ``only`` keeps those ids."""
    if not directory.is_dir():
        raise StoryError(f"{directory}: no such stories directory")
    stories = sorted((load_story(p) for p in sorted(directory.glob("*.y*ml"))), key=lambda s: s.id)
    if only is not None:
        wanted = {o.strip().upper() for o in only if o.strip()}
        unknown = wanted - {s.id.upper() for s in stories}
        if unknown:
            raise StoryError(
                f"unknown story id(s) {sorted(unknown)}; known: {[s.id for s in stories]}"
            )
        stories = [s for s in stories if s.id.upper() in wanted]
    return stories


# --------------------------------------------------------------------------- checks


def _show(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def check_expected_content(answer: str, expected: Sequence[Needle]) -> list[str]:
    """Each needle must appear in the answer (case-insensitive); a list means any of them."""
    low = answer.lower()
    failures = []
    for needle in expected:
        options = [needle] if isinstance(needle, str) else list(needle)
        if not any(o.lower() in low for o in options):
            wanted = " or ".join(repr(o) for o in options)
            failures.append(f"answer lacks {wanted}: {_show(answer)}")
    return failures


def check_must_not_contain(answer: str, forbidden: Sequence[str]) -> list[str]:
    low = answer.lower()
    return [
        f"answer contains forbidden {text!r}: {_show(answer)}"
        for text in forbidden
        if text.lower() in low
    ]


def is_subsequence(wanted: Sequence[str], seen: Sequence[str]) -> bool:
    it = iter(seen)
    return all(subject in it for subject in wanted)


def check_events(spec: EventChecks, subjects: Sequence[str]) -> list[str]:
    failures = [f"event {s} missing" for s in spec.present if s not in subjects]
    failures += [f"event {s} present but should be absent" for s in spec.absent if s in subjects]
    if spec.in_order and not is_subsequence(spec.in_order, subjects):
        failures.append(
            f"events not in order {' < '.join(spec.in_order)}; got {', '.join(subjects)}"
        )
    return failures


# payload: the /query response's JSON, unchecked: what the story checks
def check_payload(spec: PayloadChecks, payload: dict[str, Any]) -> list[str]:
    failures = []
    answer = payload.get("answer")
    if spec.answer_non_empty and not (isinstance(answer, str) and answer.strip()):
        failures.append("answer is empty")
    thinking = payload.get("thinking")
    if spec.thinking_non_empty and not (isinstance(thinking, str) and thinking.strip()):
        failures.append("thinking is empty")
    calls = payload.get("tool_calls")
    if not isinstance(calls, list):
        if spec.tool_calls or spec.tool_calls_include:
            failures.append(f"tool_calls is not a list: {calls!r}")
        return failures
    tools = [str(c.get("tool")) for c in calls if isinstance(c, dict)]
    if spec.tool_calls == "empty" and calls:
        failures.append(f"tool_calls should be empty, got {tools}")
    if spec.tool_calls == "non_empty" and not calls:
        failures.append("tool_calls should not be empty")
    failures += [
        f"no {name} tool call (got {tools or 'none'})"
        for name in spec.tool_calls_include
        if name not in tools
    ]
    return failures


def check_turn(turn: TurnSpec, payload: dict[str, Any]) -> list[str]:  # the response's JSON
    """Every reason this turn's payload fails its story's expectations (empty: it passed)."""
    answer = str(payload.get("answer") or "")
    subjects = [str(s) for s in payload.get("events") or []]
    return [
        *check_expected_content(answer, turn.expected_content),
        *check_must_not_contain(answer, turn.must_not_contain),
        *check_events(turn.events, subjects),
        *check_payload(turn.checks, payload),
    ]


# --------------------------------------------------------------------------- running


class StoryReport(TypedDict):
    """A story's result as ``local2 stories run --json`` prints it."""

    id: str
    title: str
    status: Literal["pass", "fail", "skip"]
    reasons: list[str]
    turns: int
    duration_s: float
    session_id: str
    answers: list[str]


@dataclass
class StoryResult:
    id: str
    title: str
    status: Literal["pass", "fail", "skip"]
    reasons: list[str] = field(default_factory=list)
    turns: int = 0
    duration_s: float = 0.0
    session_id: str = ""
    answers: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def as_dict(self) -> StoryReport:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "reasons": self.reasons,
            "turns": self.turns,
            "duration_s": round(self.duration_s, 2),
            "session_id": self.session_id,
            "answers": self.answers,
        }


def _http_problem(response: httpx.Response) -> str:
    try:
        detail: Any = response.json().get("detail")
    except ValueError:
        detail = response.text[:200]
    if isinstance(detail, dict):
        detail = " ".join(str(v) for v in detail.values())
    return f"HTTP {response.status_code}: {detail}"


def run_story(client: httpx.Client, story: Story) -> StoryResult:
    """Post the story's turns in one fresh session; stop at the first turn that fails."""
    session_id = f"story-{story.id}-{uuid.uuid4().hex[:8]}"
    result = StoryResult(story.id, story.title, "pass", session_id=session_id)
    started = time.monotonic()
    for number, turn in enumerate(story.turns, start=1):
        try:
            response = client.post("/query", json={"query": turn.query, "session_id": session_id})
        except httpx.HTTPError as exc:
            result.status, result.reasons = "fail", [f"turn {number}: request failed: {exc!r}"]
            break
        result.turns = number
        if response.status_code != 200:
            result.status = "fail"
            result.reasons = [f"turn {number}: {_http_problem(response)}"]
            break
        payload = response.json()
        result.answers.append(str(payload.get("answer") or ""))
        failures = check_turn(turn, payload)
        if failures:
            result.status = "fail"
            result.reasons = [f"turn {number}: {f}" for f in failures]
            break
    result.duration_s = time.monotonic() - started
    return result


def run_stories(
    base_url: str,
    stories: Sequence[Story],
    *,
    timeout_s: float = 600.0,
    token: str | None = None,
    unavailable: Iterable[str] = (),
) -> list[StoryResult]:
    """Run each story against the API at ``base_url``.

    Stories that require something listed in ``unavailable`` are skipped, with the reason.
    """
    missing = set(unavailable)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    results = []
    with httpx.Client(base_url=base_url, timeout=timeout_s, headers=headers) as client:
        health = client.get("/health")
        if health.status_code != 200:
            raise StoryError(f"{base_url}/health answered {_http_problem(health)}")
        for story in stories:
            needs = sorted(missing.intersection(story.requires))
            if needs:
                reason = f"needs {', '.join(needs)}: run without --url to set it up"
                results.append(StoryResult(story.id, story.title, "skip", [reason]))
                continue
            results.append(run_story(client, story))
    return results
