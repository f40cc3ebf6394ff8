"""What the app shows, computed from the agent's stream: chat messages and side-panel rows.

Pure functions and one small accumulator (:class:`TurnView`), so rendering is tested without
a browser. Each turn becomes, in order: the model's thinking per generation round (a
collapsible thought with its duration), each round's tool calls nested under a "Tool calls"
thought (name, arguments, result or error, duration, a spinner while running), the answer,
then the critic's grade when it arrives.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradio import ChatMessage
from gradio.components.chatbot import MetadataDict
from langchain_core.messages import BaseMessage, message_to_dict

from local2 import events
from local2.contracts import DENIED, Grade, MemoryHit, TurnPayload
from local2.ui.safe_markdown import neutralise

THINKING = "Thinking"
TOOLS = "Tool calls"
CRITIC = "Critic"
ABANDONED = "_Abandoned: this answer was cut off and is not part of the conversation._"
RESULT_PREVIEW_CHARS = 3000

MEMORY_COLUMNS = ["content", "similarity", "age", "rating", "critic", "kind"]  # rating: yours
EVENT_COLUMNS = ["t (s)", "subject", "details"]
CHECKPOINT_COLUMNS = ["checkpoint", "step", "node", "time", "next", "summary", "branch"]


# --------------------------------------------------------------------------- small helpers


def fenced(text: str, lang: str = "") -> str:
    """A Markdown code block that the text itself cannot close (tool output is untrusted)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def short(text: Any, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def args_inline(args: Any, limit: int = 90) -> str:
    """Tool arguments on one line, for the subdued text beside the tool's title."""
    if isinstance(args, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        text = json.dumps(args, ensure_ascii=False, default=str)
    return short(text, limit)


def age_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = max(0.0, float(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.1f} {unit}"
    return f"{s:.0f} s"


def critique_text(critique: Mapping[str, Any] | None) -> str:
    """The critic's grade as one line, or an empty string when it has not run."""
    if not critique:
        return ""
    score = critique.get("score")
    grade = f"{score}/5" if score is not None else "no grade (unparseable)"
    feedback = short(critique.get("feedback") or "", 400)
    return f"**Critic: {grade}**" + (f" — {neutralise(feedback)}" if feedback else "")


# --------------------------------------------------------------------------- one turn


@dataclass
class ThinkingStep:
    started: float
    text: str = ""
    ended: float | None = None
    timed: bool = True  # false for a resumed turn: how long it took was not kept

    def duration(self, now: float) -> float:
        return (self.ended if self.ended is not None else now) - self.started


@dataclass
class ToolCall:
    call_id: str
    tool: str
    args: Any
    started: float
    result: str | None = None
    error: str | None = None
    duration: float | None = None
    fix: str | None = None  # what to do about the error, when the tool knows
    # a search of several sources: each hit's record by its URL, and a source left out
    sources: Mapping[str, Mapping[str, Any]] | None = None
    notices: Sequence[str] = ()

    @property
    def done(self) -> bool:
        return self.duration is not None


@dataclass
class ToolRound:
    calls: list[ToolCall] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return all(c.done for c in self.calls)


@dataclass
class TurnView:
    """One turn as it streams in: feed it stream items with :meth:`apply`, read messages."""

    query: str
    steps: list[ThinkingStep | ToolRound] = field(default_factory=list)
    answer: str = ""
    answer_final: bool = False
    finished: bool = False
    critique: Grade | None = None
    error: str | None = None
    # event entries: each event's own fields beside subject and t (as local2.events has them)
    events: list[dict[str, Any]] = field(default_factory=list)
    payload: TurnPayload | None = None
    # the tool.approval.requested entries of the calls waiting for the person
    awaiting: list[dict[str, Any]] = field(default_factory=list)
    grading: bool = True  # False: the critic is off, no grade is coming

    # -- feeding -------------------------------------------------------------------------

    def apply(self, kind: str, data: Any, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if kind == "thinking":
            step = self.steps[-1] if self.steps else None
            if isinstance(step, ThinkingStep) and step.ended is None:
                step.text += str(data)
            else:
                self.steps.append(ThinkingStep(started=now, text=str(data)))
            return
        self._close_thinking(now)
        if kind == "token":
            if not self.answer_final:
                self.answer += str(data)
        elif kind == "event":
            self._event(data, now)
        elif kind == "answer":
            self._payload(data)
            self.answer_final = True
        elif kind == "final" and data.get("status") == "awaiting_approval":
            self._payload(data)  # paused, not over: the person's decision continues it
        elif kind == "final":
            self._payload(data)
            self.answer_final = True
            self.finished = True

    def fail(self, message: str) -> None:
        """The turn stopped (model unreachable, stream dropped, Stop pressed): close what was
        open and say why; any partial answer is marked abandoned."""
        self._close_thinking(time.monotonic())
        self.error = message
        self.finished = True

    def _close_thinking(self, now: float) -> None:
        step = self.steps[-1] if self.steps else None
        if isinstance(step, ThinkingStep) and step.ended is None:
            step.ended = now

    def _calls(self) -> list[ToolCall]:
        return [c for s in self.steps if isinstance(s, ToolRound) for c in s.calls]

    def _event(self, entry: dict[str, Any], now: float) -> None:  # an event entry, its fields
        self.events.append(entry)
        subject = str(entry.get("subject", ""))
        if subject.startswith("tool.request."):
            step = self.steps[-1] if self.steps else None
            if not isinstance(step, ToolRound) or step.done:
                step = ToolRound()
                self.steps.append(step)
            tool = str(entry.get("tool") or subject.removeprefix("tool.request."))
            call_id = str(entry.get("call_id") or f"{tool}-{len(self._calls())}")
            step.calls.append(ToolCall(call_id, tool, entry.get("args") or {}, now))
            # Text streamed before a tool call was the model's call markup, not the answer.
            self.answer = ""
        elif subject.startswith("tool.result."):
            call = next(
                (c for c in self._calls() if c.call_id == entry.get("call_id") and not c.done),
                None,
            ) or next((c for c in self._calls() if not c.done), None)
            if call is not None:
                call.duration = float(entry.get("duration_s") or (now - call.started))
                call.error = entry.get("error")
        elif subject == events.TOOL_APPROVAL_REQUESTED:
            self.awaiting.append(entry)
        elif subject in (events.TOOL_APPROVAL_GRANTED, events.TOOL_APPROVAL_DENIED):
            self.awaiting = [a for a in self.awaiting if a.get("call_id") != entry.get("call_id")]
        elif subject == events.CRITIQUE_RESULT:
            self.critique = {"score": entry.get("score"), "feedback": entry.get("feedback", "")}

    def _payload(self, payload: TurnPayload) -> None:
        """The payload is authoritative: its answer and tool results replace what streamed."""
        self.payload = payload
        self.answer = str(payload.get("answer") or "")
        if critique := payload.get("critique"):
            self.critique = critique
        if payload.get("event_log"):
            self.events = [dict(e) for e in payload["event_log"]]
        calls = self._calls()
        for call, record in zip(calls, payload.get("tool_calls") or [], strict=False):
            call.result = record.get("result")
            call.error = record.get("error")
            call.fix = record.get("fix")
            call.sources = record.get("sources")
            call.notices = record.get("notices") or ()
            if (duration := record.get("duration_s")) is not None:
                call.duration = float(duration)

    # -- reading -------------------------------------------------------------------------

    def messages(self, now: float | None = None) -> list[ChatMessage]:
        """The assistant's side of the turn, ready for ``gr.Chatbot``."""
        now = time.monotonic() if now is None else now
        out: list[ChatMessage] = []
        for i, step in enumerate(self.steps):
            if isinstance(step, ThinkingStep):
                out.append(thinking_message(step, f"think-{i}", now))
            else:
                out.extend(tool_round_messages(step, f"tools-{i}", now, self.finished))
        if self.awaiting:
            out.append(awaiting_message(self.awaiting))
        if self.answer:
            text = neutralise(self.answer)
            out.append(
                ChatMessage(
                    role="assistant", content=f"{text}\n\n{ABANDONED}" if self.error else text
                )
            )
        if self.error:
            out.append(
                ChatMessage(role="assistant", content=f"**Stopped:** {neutralise(self.error)}")
            )
        elif self.critique:
            out.append(critic_message(self.critique))
        elif self.answer_final and not self.finished and self.grading:
            out.append(
                ChatMessage(
                    role="assistant",
                    content="The critic is grading this answer.",
                    metadata={"title": f"{CRITIC}: grading…", "status": "pending"},
                )
            )
        return out


def thinking_message(step: ThinkingStep, msg_id: str, now: float) -> ChatMessage:
    metadata: MetadataDict = {
        "title": THINKING,
        "id": msg_id,
        "status": "pending" if step.ended is None else "done",
    }
    if step.timed:
        metadata["duration"] = round(step.duration(now), 3)
    return ChatMessage(role="assistant", content=neutralise(step.text.strip()), metadata=metadata)


# waiting: the tool.approval.requested entries (tool, args, call_id beside subject and t)
def awaiting_message(waiting: list[dict[str, Any]]) -> ChatMessage:
    """The chat's note that the turn is paused until the person decides (panel below)."""
    calls = "\n".join(f"{w.get('tool')}({args_inline(w.get('args'), 200)})" for w in waiting)
    return ChatMessage(
        role="assistant",
        content=fenced(calls, "text") + "\n\nApprove or deny it below the chat.",
        metadata={"title": "Waiting for your approval", "status": "pending"},
    )


def tool_round_messages(
    step: ToolRound, parent_id: str, now: float, turn_over: bool = False
) -> list[ChatMessage]:
    """A "Tool calls" thought with one nested, collapsible message per call."""
    names = ", ".join(dict.fromkeys(c.tool for c in step.calls))
    pending = not step.done and not turn_over
    parent_meta: MetadataDict = {
        "title": TOOLS,
        "id": parent_id,
        "log": f"{len(step.calls)} call{'s' if len(step.calls) != 1 else ''}: {names}",
    }
    if pending:
        parent_meta["status"] = "pending"
    out = [ChatMessage(role="assistant", content="", metadata=parent_meta)]
    for call in step.calls:
        running = not call.done and not turn_over
        title = f"Tool: {call.tool}"
        if call.error:
            refused = call.error.startswith(DENIED)
            title = f"Tool {'denied' if refused else 'failed'}: {call.tool}"
        meta: MetadataDict = {
            "title": title,
            "id": f"tool-{call.call_id}",
            "parent_id": parent_id,
            "log": args_inline(call.args),
            "status": "pending" if running else "done",
            "duration": round((call.duration or 0.0) if call.done else now - call.started, 3),
        }
        out.append(ChatMessage(role="assistant", content=tool_content(call), metadata=meta))
    return out


def tool_content(call: ToolCall) -> str:
    parts = [
        "**Arguments**",
        fenced(json.dumps(call.args, ensure_ascii=False, indent=2, default=str), "json"),
    ]
    if call.error:
        parts.append(f"**Error:** {neutralise(short(call.error, 500))}")
        if call.fix:
            parts.append(f"**What to do:** {neutralise(short(call.fix, 500))}")
    if call.result is not None and not call.error:
        text = call.result
        more = ""
        if len(text) > RESULT_PREVIEW_CHARS:
            more = f"\n… ({len(text) - RESULT_PREVIEW_CHARS} more characters)"
            text = text[:RESULT_PREVIEW_CHARS]
        if call.sources:
            parts += [
                f"**Sources** ({len(call.sources)})",
                fenced(records_text(call.sources), "text"),
            ]
        if call.notices:
            parts.append("**Left out:** " + neutralise(short("; ".join(call.notices), 500)))
        parts += [f"**Result** ({len(call.result)} characters)", fenced(text + more, "text")]
    elif not call.done:
        parts.append("_Running…_")
    return "\n\n".join(parts)


def records_text(records: Mapping[str, Mapping[str, Any]]) -> str:
    """A sourced search's hits, one a line: date (or "undated"), who found it, its kind, a
    retraction, and the URL it is listed under."""
    lines = []
    for url, meta in records.items():
        said = [str(meta.get("published") or "undated"), str(meta.get("provider") or "?")]
        said.append(str(meta.get("kind") or "web"))
        if meta.get("retracted"):
            said.insert(0, "RETRACTED")
        lines.append(f"{' · '.join(said)} — {url}")
    return "\n".join(lines)


def critic_message(critique: Grade) -> ChatMessage:
    score = critique.get("score")
    grade = f"{score}/5" if score is not None else "no grade"
    return ChatMessage(
        role="assistant",
        content=neutralise(str(critique.get("feedback") or "")),
        metadata={"title": f"{CRITIC}: {grade}", "status": "done"},
    )


# --------------------------------------------------------------------------- history and panels


def memory_rows(hits: Sequence[MemoryHit]) -> list[list[Any]]:
    rows = []
    for hit in hits:
        similarity = hit.get("similarity")
        rows.append(
            [
                short(hit.get("content", ""), 160),
                round(float(similarity), 3) if similarity is not None else None,
                age_text(hit.get("age_s")),
                hit.get("reward"),
                hit.get("critic_score"),
                hit.get("kind", ""),
            ]
        )
    return rows


def event_rows(event_log: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """One row per event, in time order (parallel nodes append theirs out of order)."""
    rows = []
    for entry in sorted(event_log, key=lambda e: float(e.get("t") or 0.0)):
        details = {k: v for k, v in entry.items() if k not in ("subject", "t")}
        rows.append(
            [
                entry.get("t"),
                entry.get("subject", ""),
                short(json.dumps(details, ensure_ascii=False, default=str), 200),
            ]
        )
    return rows


def checkpoint_rows(
    checkpoints: Sequence[Mapping[str, Any]], new_ids: frozenset[str] | set[str] = frozenset()
) -> list[list[Any]]:
    return [
        [
            c["checkpoint_id"],
            c.get("step"),
            c.get("node") or "",
            str(c.get("created_at") or "")[:19].replace("T", " "),
            ", ".join(c.get("next") or []) or "(end of turn)",
            c.get("summary") or "",
            branch_label(c, c["checkpoint_id"] in new_ids),
        ]
        for c in checkpoints
    ]


def branch_label(checkpoint: Mapping[str, Any], new: bool = False) -> str:
    """Which branch a checkpoint is on: the session's current one, another, or abandoned."""
    if checkpoint.get("abandoned"):
        label = "abandoned"
    elif checkpoint.get("current"):
        label = "current"
    else:
        label = "other"
    return f"{label} · new" if new else label


def checkpoint_choices(checkpoints: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Dropdown choices: a readable label per checkpoint, the id as value."""
    choices = []
    for c in checkpoints:
        nxt = ", ".join(c.get("next") or []) or "end of turn"
        label = f"step {c.get('step')} · after {c.get('node') or '-'} · next: {nxt}"
        if c.get("summary"):
            label += f" · {short(c['summary'], 50)}"
        choices.append((label, c["checkpoint_id"]))
    return choices


def session_choices(sessions: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    choices = []
    for s in sessions:
        if s.get("session_id"):
            first = short(s.get("first") or "(no question yet)", 60)
            choices.append((f"{first} · {s['session_id'][:8]}", s["session_id"]))
    return choices


def jsonable(value: Any) -> Any:
    """State values as JSON: messages become role/content dicts, the rest plain data."""
    if isinstance(value, BaseMessage):
        data = message_to_dict(value)["data"]
        out = {"role": value.type, "content": data.get("content", "")}
        for key in ("tool_calls", "tool_call_id", "name", "id"):
            if data.get(key):
                out[key] = data[key]
        return out
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def state_view(state: Mapping[str, Any]) -> dict[str, Any]:  # JSON, for a gr.JSON
    """A checkpoint's state for people: thinking shown apart, messages readable."""
    view: dict[str, Any] = jsonable(state)  # the state's values as JSON
    return view


ADDRESS = re.compile(r"(?<![(<\w])https?://[^\s)<>\]]*[^\s)<>\].,;:!?'\"]")


def unlinked(markdown: str) -> str:
    """``markdown`` with its bare web addresses as code: shown, never links to click (the
    address an error names is the one that failed). Code spans are left as they are."""
    parts = markdown.split("`")
    for n in range(0, len(parts), 2):  # even parts are outside code spans
        parts[n] = ADDRESS.sub(lambda m: f"`{m.group(0)}`", parts[n])
    return "`".join(parts)


def banner(message: str, fix: str = "", kind: str = "error") -> str:
    """Markdown for the banner above the chat: what happened and what to do about it."""
    label = {"error": "Error", "warning": "Note", "info": "Note"}.get(kind, "Note")
    text = f"**{label}: {unlinked(neutralise(message))}**"
    if fix:
        text += f"  \n**Fix:** {unlinked(neutralise(fix))}"
    return text
