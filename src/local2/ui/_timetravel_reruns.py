"""Time travel's reruns: fork a turn's question, replay a turn, or replay from one of its
checkpoints, streamed like a turn into the New branch pane.

The original branch stays intact; the session then continues from the new one. The Chat
tab is left on the branch the person was on and offers to switch (:mod:`local2.ui._sessions`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import gradio as gr

import local2.ui._render as render
import local2.ui._turn_list as turn_list
from local2.contracts import CheckpointTurn
from local2.errors import InvalidInput, Local2Error, NotFound, TurnCancelled
from local2.service import Agent
from local2.ui._base import UIPart, live, table
from local2.ui._notices import Notice, notice_for
from local2.ui._safe_markdown import neutralise
from local2.ui._session_panel import SessionPanel
from local2.ui._timetravel_details import TurnDetails
from local2.ui._updates import Updates


class TravelTab(Protocol):
    """What the reruns draw into and read from: the Time travel tab
    (:class:`~local2.ui._time_travel_tab.TimeTravelTab`, which owns them; named by shape, so the
    two modules do not import each other)."""

    tt_new: gr.Chatbot
    tt_new_note: gr.Markdown
    tt_turns: gr.Dataframe
    tt_turn: gr.Dropdown
    tt_turn_ids: gr.State
    tt_original: gr.Markdown
    tt_status: gr.Markdown
    details: TurnDetails
    sessions: SessionPanel

    def tt_error(self, message: str) -> str: ...

    def turns(self, session_id: str) -> list[CheckpointTurn]: ...

    def find(self, session_id: str, turn_id: str) -> CheckpointTurn: ...


@dataclass(frozen=True)
class Rerun:
    """A replay (``query`` None) or fork from checkpoint ``start``, asked for from the picked
    turn ``turn_id`` (the Original branch pane's, redrawn after: its branch moved) or from a
    checkpoint ``step`` of its details; ``what`` names where it started, for the note."""

    start: str
    query: str | None
    turn_id: str | None
    step: str | None
    what: str


class Reruns(UIPart):
    """The tab's Fork this question, Replay this turn and Replay from this checkpoint."""

    def __init__(self, agent: Agent, travel: TravelTab) -> None:
        super().__init__(agent)
        self.travel = travel

    def outputs(self) -> list[Any]:
        """What a rerun draws: the New branch pane, the turns, the picked turn's panes."""
        travel = self.travel
        return [
            travel.tt_new,
            travel.tt_new_note,
            travel.tt_turns,
            travel.tt_turn,
            travel.tt_turn_ids,
            travel.tt_original,
            travel.details.tt_checkpoints,
            travel.details.tt_pick,
            travel.details.tt_state,
            travel.tt_status,
            *travel.sessions.branch_outputs(),
        ]

    def fork(
        self,
        session_id: str,
        turn_id: str | None,
        edited: str,
        current: str | None,
        branch: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        """Ask the picked turn's question again, edited, from just before that turn."""
        turn = yield from self._picked(session_id, turn_id, request)
        if turn is not None:
            what = f"{turn_list.title(turn).lower()} from just before it ran"
            rerun = Rerun(turn["fork_from"], edited or "", turn_id, None, what)
            yield from self._rerun(session_id, rerun, current, branch, request)

    def replay(
        self,
        session_id: str,
        turn_id: str | None,
        current: str | None,
        branch: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        """Run the picked turn again as it was, from once its question was received."""
        turn = yield from self._picked(session_id, turn_id, request)
        if turn is None:
            return
        if turn["replay_from"] is None:
            yield self._say("That turn never started; fork it instead.")
            return
        rerun = Rerun(turn["replay_from"], None, turn_id, None, turn_list.title(turn).lower())
        yield from self._rerun(session_id, rerun, current, branch, request)

    def replay_step(
        self,
        session_id: str,
        checkpoint_id: str | None,
        turn_id: str | None,
        current: str | None,
        branch: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        """Replay from one checkpoint of the details (of the picked turn ``turn_id``): the
        steps after it run again."""
        if not checkpoint_id:
            yield self._say("Pick a checkpoint in the details first.")
            return
        rerun = Rerun(checkpoint_id, None, turn_id, checkpoint_id, f"checkpoint `{checkpoint_id}`")
        yield from self._rerun(session_id, rerun, current, branch, request)

    def _say(self, problem: str) -> Updates:
        """A problem the person can fix, on the status line."""
        return {self.travel.tt_status: self.travel.tt_error(problem)}

    def _picked(
        self, session_id: str | None, turn_id: str | None, request: gr.Request | None
    ) -> Generator[Updates, None, CheckpointTurn | None]:
        """The picked turn of the person's own session, or None after saying why not."""
        session_id = (session_id or "").strip()
        if not session_id or not turn_id:
            yield self._say("Load a session's turns and pick one.")
            return None
        try:
            self.agent.access.write_session(self.person(request), session_id)
            return self.travel.find(session_id, turn_id)
        except Local2Error as exc:
            yield {self.travel.tt_status: notice_for(exc).markdown()}
            return None

    def _rerun_failed(self, user: gr.ChatMessage, view: render.TurnView, said: Notice) -> Updates:
        view.fail(said.text)
        return {
            self.travel.tt_new: [user, *view.messages()],
            self.travel.tt_status: said.markdown(),
        }

    def _rerun(
        self,
        session_id: str,
        rerun: Rerun,
        current: str | None,
        branch: str | None,
        request: gr.Request | None,
    ) -> Iterator[Updates]:
        """Stream ``rerun`` into the New branch pane (the owner's session only).

        ``current``/``branch``: the Chat tab's session and branch. When the rerun is in that
        session, the Chat tab stays on the branch it showed and offers to switch.
        """
        session_id = (session_id or "").strip()
        if not session_id:
            yield self._say("Load a session's turns and pick one.")
            return
        try:
            self.agent.access.write_session(self.person(request), session_id)
            state = self.agent.sessions.state(session_id, rerun.start)
        except Local2Error as exc:
            yield {self.travel.tt_status: notice_for(exc).markdown()}
            return
        query = rerun.query
        question = query if query is not None else str(state.get("query") or "")
        stay_on = branch
        if session_id == current and branch is None:
            stay_on = self.agent.sessions.head_id(session_id)  # what the Chat tab shows right now
        user = gr.ChatMessage(role="user", content=neutralise(question))
        view = render.TurnView(question)
        verb = "Forked" if query is not None else "Replayed"
        yield {
            self.travel.tt_new: [user],
            self.travel.tt_new_note: "",
            self.travel.tt_status: f"{verb[:-2]}ing…",
        }
        try:
            for _ in live(
                self.agent.timetravel.replay_stream(session_id, rerun.start, query=query), view
            ):
                yield {self.travel.tt_new: [user, *view.messages()]}
        except (Local2Error, TurnCancelled) as exc:  # a Stop: pressed in the Chat tab
            said = notice_for(exc)
            if isinstance(exc, InvalidInput | NotFound):  # refused before anything ran
                yield {self.travel.tt_status: said.markdown()}
            else:
                yield self._rerun_failed(user, view, said)
            return
        yield self._rerun_done(session_id, rerun, verb, user, view, current, stay_on)

    def _rerun_done(
        self,
        session_id: str,
        rerun: Rerun,
        verb: str,
        user: gr.ChatMessage,
        view: render.TurnView,
        current: str | None,
        stay_on: str | None,
    ) -> dict[Any, Any]:
        """The panes once a rerun has streamed: its new turn marked in the list (the picked
        turn stays picked, so the Original branch pane still shows it), a note when it paused
        for approval, and the Chat tab kept on ``stay_on``."""
        payload = view.payload
        new_ids = set((payload.get("branch") if payload else None) or [])
        turns = self.travel.turns(session_id)
        new_turns = frozenset(t["turn_id"] for t in turns if new_ids & set(t["checkpoints"]))
        titles = ", ".join(turn_list.title(t) for t in turns if t["turn_id"] in new_turns)
        out: dict[Any, Any] = {
            self.travel.tt_new: [user, *view.messages()],
            self.travel.tt_new_note: f"_{verb} {rerun.what}: {len(new_ids)} new "
            f"checkpoint(s). In the list above it is {titles or 'the turn'}, marked “new”._",
            self.travel.tt_turns: table(turn_list.TURN_COLUMNS, turn_list.rows(turns, new_turns)),
            self.travel.tt_turn: gr.update(choices=turn_list.choices(turns)),
            self.travel.tt_turn_ids: [t["turn_id"] for t in turns],
            self.travel.tt_status: f"{verb}: the new branch is now the session's current branch.",
        }
        shown = next((t for t in turns if t["turn_id"] == rerun.turn_id), None)
        if shown is not None:  # the same turn, now on another branch
            out[self.travel.tt_original] = turn_list.pane(shown)
            out.update(self.travel.details.steps(session_id, shown, rerun.step))
        if payload and payload.get("status") == "awaiting_approval":
            approval = payload.get("approval")
            tools = ", ".join(c["tool"] for c in (approval["calls"] if approval else []))
            out[self.travel.tt_new_note] += (
                f"\n\n**Paused: {tools} waits for your approval.** Approve or deny it in the "
                "Chat tab (switch to the new branch, or resume this session there)."
            )
        if session_id == current and stay_on:
            out[self.travel.tt_status] += (
                " The Chat tab stays on the branch you were on until you switch."
            )
            out.update(self.travel.sessions.on_branch(session_id, stay_on))
        return out
