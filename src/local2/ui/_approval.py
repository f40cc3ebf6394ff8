"""The app's approval panel: what a paused turn waits on, with Approve and Deny
(docs/architecture.md, "Trust boundaries").

Shown under the chat when a tool call needs the person: the tool, its arguments, why it waits
and the tool result that preceded it (where an injected instruction would come from). All of
that text came from the model or from outside, so it is shown in code blocks, never rendered.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypedDict

import gradio as gr

from local2.contracts import ApprovalRequest, ApprovalWait, PendingApproval
from local2.ui._render import TurnView, fenced, short
from local2.ui._safe_markdown import neutralise

PREVIEW_CHARS = 600


def code_span(text: str) -> str:
    """Inline code that the text cannot close, so a URL in it is not made a link."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}"


def describe(request: ApprovalRequest | ApprovalWait) -> str:
    """Markdown for the waiting calls of ``request`` (an approval request or its payload part)."""
    calls = request.get("calls") or []
    what = "a tool call that needs" if len(calls) == 1 else f"{len(calls)} tool calls that need"
    lines = [f"### The model wants to run {what} your approval"]
    for call in calls:
        lines += [
            f"**{call.get('tool')}** — {short(call.get('reason') or '', 400)}",
            fenced(json.dumps(call.get("args") or {}, ensure_ascii=False, indent=2), "json"),
        ]
        after = call.get("after")
        if after:
            args = short(json.dumps(after.get("args") or {}, ensure_ascii=False), 160)
            lines += [
                f"It came after this **{after.get('tool')}** result {code_span(args)}:",
                fenced(str(after.get("preview") or "")[:PREVIEW_CHARS], "text"),
            ]
    lines.append("Approve runs it; Deny tells the model it was refused.")
    return "\n\n".join(lines)


class Paused(TypedDict):
    """What the panel holds of a paused turn, so that the decision continues it in place:
    the turn's view, the chat before it and the question's message."""

    view: TurnView
    chat: list[Any]
    user: gr.ChatMessage


class ApprovalPanel:
    """The panel's components; build it inside the chat column of a ``gr.Blocks``."""

    def __init__(self) -> None:
        with gr.Column(visible=False, elem_id="local2-approval") as self.box:
            self.details = gr.Markdown("", elem_id="local2-approval-details")
            with gr.Row():
                self.approve = gr.Button("Approve", variant="primary", elem_id="local2-approve")
                self.deny = gr.Button("Deny", variant="stop", elem_id="local2-deny")
        # What the paused turn was showing, so the decision continues it in place.
        self.pending = gr.State(None)

    @property
    def outputs(self) -> list[Any]:
        return [self.box, self.details, self.pending]

    def show(self, request: ApprovalRequest | ApprovalWait, pending: Paused) -> dict[Any, Any]:
        return {
            self.box: gr.update(visible=True),
            self.details: describe(request),
            self.pending: pending,
        }

    def hide(self) -> dict[Any, Any]:
        return {self.box: gr.update(visible=False), self.details: "", self.pending: None}

    def waiting(self, request: PendingApproval | None, chat: list[Any]) -> dict[Any, Any]:
        """The panel for a session whose last turn is paused on ``request`` (None: hidden),
        holding what the decision continues (the turn's view, the chat before it)."""
        if request is None:
            return self.hide()
        question = str(request.get("query") or "")
        view = TurnView(question)
        for asked in request.get("events") or []:
            view.apply("event", asked)
        user = gr.ChatMessage(role="user", content=neutralise(question))
        return self.show(request, {"view": view, "chat": chat, "user": user})
