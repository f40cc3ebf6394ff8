"""What every part of the app shares: the agent, its UI settings, tables, live redraws."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import gradio as gr

from local2.contracts import DocumentHit, Person, TurnOptions
from local2.errors import Local2Error, TurnCancelled
from local2.service import Agent
from local2.ui import render
from local2.ui.notices import Notice, notice_for
from local2.ui.sign_in import person_of

if TYPE_CHECKING:
    from local2.ui.approval import ApprovalPanel
    from local2.ui.models import ModelPicker

STREAM_INTERVAL_S = 0.05  # at most ~20 chat refreshes a second while tokens stream


def table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """A ``gr.Dataframe`` value: headers and rows."""
    return {"headers": columns, "data": rows}


class UIPart:
    """Base of the app's parts (chat, sessions, ratings, time travel).

    Each part lays out its own components on ``self`` and wires its own handlers; they share
    components through ``self`` (outputs are keyed by component), so they are mixed into one
    :class:`~local2.ui.app.LocalUI`.
    """

    agent: Agent
    # What the parts share, declared once so the type checker reads every part alone:
    # components (laid out by the part named), and handlers other parts call.
    banner: gr.Markdown  # app
    picker: ModelPicker
    model_pick: gr.Dropdown
    signed_in_row: gr.Row
    signed_in_md: gr.Markdown
    arena_tab_item: gr.Tab
    chatbot: gr.Chatbot  # chat
    stop_btn: gr.Button
    approval: ApprovalPanel
    critic_md: gr.Markdown
    memory_df: gr.Dataframe
    document_df: gr.Dataframe  # documents
    attached_md: gr.Markdown
    prompt_json: gr.JSON
    events_df: gr.Dataframe
    session_id: gr.State  # sessions
    chat_msgs: gr.State
    query_ids: gr.State
    branch: gr.State
    my_sessions: gr.BrowserState
    session_pick: gr.Dropdown
    new_session: gr.Button
    resume: gr.Button
    reward_md: gr.Markdown  # ratings
    tt_session: gr.Textbox  # time travel
    pair_target: gr.State  # compare

    if TYPE_CHECKING:  # handlers one part defines and others call

        def _signed_in(
            self, person: Person | None, request: gr.Request | None
        ) -> tuple[Any, str]: ...
        def _waiting_panel(self, session_id: str, chat: list[Any]) -> dict[Any, Any]: ...
        def stop_turn(
            self, session_id: str | None, request: gr.Request | None = None
        ) -> dict[Any, Any]: ...
        def _branch_notice(self) -> None: ...
        def _branch_outputs(self) -> list[Any]: ...
        def _session_outputs(self) -> list[Any]: ...
        def _session_panel(self) -> None: ...
        def _attach_row(self) -> None: ...
        def _document_hits_panel(self) -> None: ...
        def _turn_panels(self) -> None: ...
        def _attachments_view(
            self, session_id: str, hits: Sequence[DocumentHit], person: Person | None
        ) -> dict[Any, Any]: ...
        def _session_choices(
            self, mine: list[dict[str, Any]] | None, person: Person
        ) -> list[tuple[str, str]]: ...
        def _on_branch(self, session_id: str, branch: str | None) -> dict[Any, Any]: ...
        def _session_view(self, session_id: str, branch: str | None = None) -> dict[Any, Any]: ...
        @staticmethod
        def _remember(
            mine: list[dict[str, Any]] | None, session_id: str, question: str
        ) -> list[dict[str, Any]]: ...
        def _rating_row(self) -> None: ...
        def _rating_outputs(self) -> list[Any]: ...
        def _rating_enabled(self, enabled: bool) -> dict[Any, Any]: ...
        def _rating_target(
            self, query_id: str | None, question: str | None, enabled: bool
        ) -> dict[Any, Any]: ...
        def _compare_controls(self) -> None: ...
        def _compare_panel(self) -> None: ...
        def _compare_inputs(self) -> list[Any]: ...
        def _compare_outputs(self) -> list[Any]: ...
        def _compare_options(
            self, on: bool | None, model: str | None, temperature: str | None
        ) -> tuple[TurnOptions, str | None]: ...
        def _compare_hidden(self) -> dict[Any, Any]: ...
        def _compare_done(self, payload: Any) -> dict[Any, Any]: ...
        def _pair_view(self, payload: Any) -> dict[Any, Any]: ...
        def _pair_outputs(self) -> list[Any]: ...
        def _pair_graded(self, session_id: str, query_id: str) -> dict[Any, Any]: ...
        def _wire_compare(self, chat_outputs: list[Any]) -> None: ...
        def approve(
            self,
            session_id: str | None,
            pending: Any,
            ids: Any,
            mine: Any,
            request: gr.Request | None = None,
        ) -> Iterator[dict[Any, Any]]: ...
        def deny(
            self,
            session_id: str | None,
            pending: Any,
            ids: Any,
            mine: Any,
            request: gr.Request | None = None,
        ) -> Iterator[dict[Any, Any]]: ...
        def _follow(
            self,
            items: Iterator[tuple[str, Any]],
            view: render.TurnView,
            chat: list[Any],
            ids: dict[int, str],
            user: gr.ChatMessage,
            session_id: str,
            mine: list[dict[str, Any]] | None,
            person: Person,
            question: str = "",
        ) -> Iterator[dict[Any, Any]]: ...

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.settings = agent.settings.ui
        self.proxied = bool(agent.settings.server.trusted_user_header)  # names from a proxy

    def person(self, request: gr.Request | None) -> Person:
        """Whom a handler acts for: the person signed in to this browser (local when nobody
        is configured); :class:`~local2.ui.sign_in.SignedOut` when that is no one here."""
        return person_of(self.agent.access, self.proxied, request)

    @staticmethod
    def notice(problem: Local2Error | TurnCancelled | str) -> Any:
        """A banner's update showing ``problem`` (an error, or a note in words)."""
        shown = Notice(problem) if isinstance(problem, str) else notice_for(problem)
        return gr.update(value=shown.markdown(), visible=True)


def live(
    items: Iterator[tuple[str, Any]], view: render.TurnView, interval_s: float = STREAM_INTERVAL_S
) -> Iterator[str]:
    """Feed a turn's stream items to ``view``; yield an item's kind when the chat should be
    redrawn (thinking and answer tokens at most every ``interval_s``, everything else at once)."""
    last = 0.0
    for kind, data in items:
        view.apply(kind, data)
        now = time.monotonic()
        if kind in ("thinking", "token") and now - last < interval_s:
            continue
        last = now
        yield kind
