"""The Gradio app (DESIGN §6): chat that streams, what the model did, ratings, time travel.

Every browser tab gets its own session id (``gr.State``); the sessions a browser used are
kept in its own ``localStorage`` (``gr.BrowserState``), so people sharing one server do not
see each other's conversations. Handlers are sync generators over :meth:`Agent.stream`: the
queue runs several at once, so one slow answer does not hold up anyone else's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from local2.agent import Agent, InvalidQuery, UnknownTurn, new_session_id
from local2.models.errors import ModelError
from local2.ui import render
from local2.ui.safe_markdown import neutralise

RATINGS = ["1", "2", "3", "4", "5"]
STREAM_INTERVAL_S = 0.05  # at most ~20 chat refreshes a second while tokens stream
MY_SESSIONS_KEPT = 30

CSS = """
#local2-banner { border-left: 4px solid #d9534f; padding: 0.4em 0.8em; }
#local2-notice { border-left: 4px solid #f0ad4e; padding: 0.4em 0.8em; }
#local2-session code { font-size: 0.85em; }
"""


def _table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {"headers": columns, "data": rows}


def _browser_secret(data_dir: Path) -> str:
    """A per-installation key for the browser's session list, so it survives restarts."""
    path = data_dir / "ui_secret"
    try:
        return path.read_text().strip() or _new_secret(path)
    except OSError:
        return _new_secret(path)


def _new_secret(path: Path) -> str:
    secret = secrets.token_urlsafe(24)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secret)
    except OSError:  # read-only data dir: the list just lasts as long as the server
        pass
    return secret


class LocalUI:
    """The app's components and handlers; :meth:`build` lays them out in a ``gr.Blocks``."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.settings = agent.settings.ui

    # -- layout ----------------------------------------------------------------------------

    def build(self) -> gr.Blocks:
        agent = self.agent
        services = agent.services
        with gr.Blocks(title="LoCAL2", analytics_enabled=False) as demo:
            self.session_id = gr.State(None)
            self.chat_msgs = gr.State([])
            self.query_ids = gr.State({})  # index of the user message -> query_id
            self.my_sessions = gr.BrowserState(
                [], storage_key="local2-sessions", secret=_browser_secret(agent.settings.data_dir)
            )
            gr.Markdown(
                f"## LoCAL2 · a local research assistant you can see inside\n"
                f"Model **{services.model_name}** ({services.backend}) · tools: "
                f"{', '.join(sorted(services.tools)) or 'none'} · memory "
                f"{'on' if services.memory is not None else 'off'} · critic "
                f"{'on' if services.critic is not None else 'off'}"
            )
            gr.Markdown(
                render.banner(agent.notice, kind="warning") if agent.notice else "",
                visible=bool(agent.notice),
                elem_id="local2-notice",
            )
            self.banner = gr.Markdown("", visible=False, elem_id="local2-banner")
            with gr.Tabs():
                with gr.Tab("Chat", id="chat"):
                    self._chat_tab()
                with gr.Tab("Time travel", id="time-travel"):
                    self._time_travel_tab()
            self._wire(demo)
        demo.queue(default_concurrency_limit=self.settings.concurrency_limit)
        return demo

    def _chat_tab(self) -> None:
        with gr.Row():
            with gr.Column(scale=3):
                self.chatbot = gr.Chatbot(
                    label="Conversation",
                    height=620,
                    elem_id="local2-chat",
                    feedback_options=RATINGS,
                    placeholder="Ask a question. The model's thinking, each tool call and "
                    "the critic's grade appear here as they happen.",
                    buttons=["copy"],
                )
                with gr.Row():
                    self.question = gr.Textbox(
                        placeholder="Ask something, e.g. What major AI news broke this week?",
                        show_label=False,
                        scale=5,
                        elem_id="local2-question",
                        autofocus=True,
                    )
                    self.send = gr.Button("Send", variant="primary", scale=1, elem_id="local2-send")
                self.critic_md = gr.Markdown("", elem_id="local2-critic")
                with gr.Row(elem_id="local2-rating"):
                    self.rating = gr.Radio(
                        RATINGS,
                        label="Rate the last answer (1 = bad, 5 = good)",
                        scale=3,
                        elem_id="local2-rating-choice",
                    )
                    self.rate = gr.Button("Record rating", scale=1, elem_id="local2-rate")
                self.reward_md = gr.Markdown("", elem_id="local2-reward")
            with gr.Column(scale=2):
                with gr.Accordion("Session", open=True):
                    self.session_md = gr.Markdown("", elem_id="local2-session")
                    with gr.Row():
                        self.new_session = gr.Button("New session", size="sm")
                    self.session_pick = gr.Dropdown(
                        choices=[],
                        label="Resume a session: pick a recent one or paste its id",
                        allow_custom_value=True,
                        elem_id="local2-session-pick",
                    )
                    self.resume = gr.Button("Resume", size="sm", elem_id="local2-resume")
                with gr.Accordion("Memory hits of this turn", open=True):
                    self.memory_df = gr.Dataframe(
                        value=_table(render.MEMORY_COLUMNS, []),
                        interactive=False,
                        wrap=True,
                        column_widths=["44%", "12%", "10%", "10%", "12%", "12%"],
                        elem_id="local2-memory",
                    )
                with gr.Accordion("Messages the model saw (thinking removed)", open=False):
                    self.prompt_json = gr.JSON(value=[], elem_id="local2-prompt")
                with gr.Accordion("Event log", open=False):
                    self.events_df = gr.Dataframe(
                        value=_table(render.EVENT_COLUMNS, []),
                        interactive=False,
                        wrap=True,
                        column_widths=["12%", "30%", "58%"],
                        elem_id="local2-events",
                    )

    def _time_travel_tab(self) -> None:
        gr.Markdown(
            "Pick a session, load its checkpoints (newest first), inspect the state at one, "
            "then replay from it or fork it with an edited question. The original branch stays "
            "intact; the new one appears beside it."
        )
        with gr.Row():
            self.tt_session = gr.Textbox(label="Session id", scale=4, elem_id="tt-session")
            self.tt_load = gr.Button("Load checkpoints", scale=1, elem_id="tt-load")
        self.tt_status = gr.Markdown("", elem_id="tt-status")
        self.tt_table = gr.Dataframe(
            value=_table(render.CHECKPOINT_COLUMNS, []),
            interactive=False,
            wrap=True,
            max_height=320,
            column_widths=["24%", "6%", "11%", "13%", "12%", "28%", "6%"],
            elem_id="tt-checkpoints",
        )
        self.tt_pick = gr.Dropdown(choices=[], label="Checkpoint", elem_id="tt-pick")
        with gr.Accordion("State at this checkpoint", open=False):
            self.tt_state = gr.JSON(value={}, elem_id="tt-state")
        with gr.Row():
            self.tt_edit = gr.Textbox(
                label="Edited question (for a fork)", scale=4, elem_id="tt-edit"
            )
            with gr.Column(scale=1):
                self.tt_replay = gr.Button("Replay from here", elem_id="tt-replay")
                self.tt_fork = gr.Button(
                    "Fork with edited question", variant="primary", elem_id="tt-fork"
                )
        with gr.Row():
            with gr.Column():
                gr.Markdown("#### Original branch")
                self.tt_original = gr.Markdown("", elem_id="tt-original")
            with gr.Column():
                gr.Markdown("#### New branch")
                self.tt_new = gr.Markdown("", elem_id="tt-new")

    def _wire(self, demo: gr.Blocks) -> None:
        limit = self.settings.concurrency_limit
        demo.load(
            self.on_load,
            [self.my_sessions],
            [self.session_id, self.session_md, self.session_pick, self.tt_session],
        )
        chat_outputs = [
            self.chatbot,
            self.chat_msgs,
            self.question,
            self.banner,
            self.memory_df,
            self.prompt_json,
            self.events_df,
            self.critic_md,
            self.query_ids,
            self.my_sessions,
            self.session_pick,
            self.reward_md,
        ]
        chat_inputs = [
            self.question,
            self.session_id,
            self.chat_msgs,
            self.query_ids,
            self.my_sessions,
        ]
        for trigger in (self.question.submit, self.send.click):
            trigger(
                self.respond,
                chat_inputs,
                chat_outputs,
                concurrency_limit=limit,
                show_progress="minimal",
            )
        self.rate.click(
            self.rate_last,
            [self.rating, self.session_id, self.query_ids],
            [self.reward_md, self.events_df, self.banner],
        )
        self.chatbot.like(
            self.rate_message,
            [self.session_id, self.chat_msgs, self.query_ids],
            [self.reward_md, self.events_df, self.banner],
        )
        session_outputs = [
            self.session_id,
            self.session_md,
            self.chatbot,
            self.chat_msgs,
            self.query_ids,
            self.memory_df,
            self.prompt_json,
            self.events_df,
            self.critic_md,
            self.reward_md,
            self.banner,
            self.tt_session,
        ]
        self.new_session.click(self.start_new_session, None, session_outputs)
        self.resume.click(self.resume_session, [self.session_pick], session_outputs)

        self.tt_load.click(
            self.load_checkpoints, [self.tt_session], [self.tt_table, self.tt_pick, self.tt_status]
        )
        self.tt_table.select(self.pick_row, None, [self.tt_pick])
        self.tt_pick.change(
            self.show_checkpoint,
            [self.tt_session, self.tt_pick],
            [self.tt_state, self.tt_original, self.tt_edit, self.tt_status],
        )
        tt_outputs = [
            self.tt_new,
            self.tt_table,
            self.tt_pick,
            self.tt_status,
            self.chatbot,
            self.chat_msgs,
            self.query_ids,
        ]
        self.tt_replay.click(
            self.replay,
            [self.tt_session, self.tt_pick, self.session_id],
            tt_outputs,
            concurrency_limit=limit,
        )
        self.tt_fork.click(
            self.fork,
            [self.tt_session, self.tt_pick, self.tt_edit, self.session_id],
            tt_outputs,
            concurrency_limit=limit,
        )

    # -- sessions --------------------------------------------------------------------------

    def _session_choices(self, mine: list[dict[str, Any]] | None) -> list[tuple[str, str]]:
        sessions = list(mine or [])
        if self.settings.list_all_sessions:
            known = {s.get("session_id") for s in sessions}
            recent = self.agent.sessions(MY_SESSIONS_KEPT)
            sessions += [s for s in recent if s["session_id"] not in known]
        return render.session_choices(sessions)

    @staticmethod
    def _session_label(session_id: str) -> str:
        return f"Session `{session_id}`"

    def on_load(self, mine: list[dict[str, Any]] | None) -> tuple[Any, ...]:
        session_id = new_session_id()
        return (
            session_id,
            self._session_label(session_id),
            gr.update(choices=self._session_choices(mine), value=None),
            session_id,
        )

    def _session_view(self, session_id: str, chat: list[Any], ids: dict[int, str]) -> dict:
        """Outputs that show a session: its chat, and the panels of its last turn."""
        panels: dict[str, Any] = {"hits": [], "events": [], "prompt": [], "critique": None}
        if self.agent.exists(session_id):
            state = self.agent.state(session_id)
            panels = {
                "hits": state.get("memory_hits") or [],
                "events": state.get("event_log") or [],
                "prompt": self.agent.prompt_messages(session_id),
                "critique": state.get("critique"),
            }
        return {
            self.session_id: session_id,
            self.session_md: self._session_label(session_id),
            self.chatbot: chat,
            self.chat_msgs: chat,
            self.query_ids: ids,
            self.memory_df: _table(render.MEMORY_COLUMNS, render.memory_rows(panels["hits"])),
            self.prompt_json: panels["prompt"],
            self.events_df: _table(render.EVENT_COLUMNS, render.event_rows(panels["events"])),
            self.critic_md: render.critique_text(panels["critique"]),
            self.reward_md: "",
            self.banner: gr.update(value="", visible=False),
            self.tt_session: session_id,
        }

    def start_new_session(self) -> dict:
        return self._session_view(new_session_id(), [], {})

    def resume_session(self, session_id: str | None) -> dict:
        session_id = (session_id or "").strip()
        if not session_id or not self.agent.exists(session_id):
            shown = session_id or "(none given)"
            return {
                self.banner: gr.update(
                    value=render.banner(
                        f"No session {shown} here.",
                        "Pick one from the list of recent sessions or paste a full session id.",
                        kind="warning",
                    ),
                    visible=True,
                )
            }
        chat, ids = self._history_chat(session_id)
        return self._session_view(session_id, chat, ids)

    def _history_chat(self, session_id: str) -> tuple[list[Any], dict[int, str]]:
        turns = self.agent.history(session_id, limit=200)
        chat = render.history_messages(turns)
        ids = {2 * i: str(t["query_id"]) for i, t in enumerate(turns)}
        return chat, ids

    @staticmethod
    def _remember(
        mine: list[dict[str, Any]] | None, session_id: str, question: str
    ) -> list[dict[str, Any]]:
        sessions = [dict(s) for s in mine or [] if isinstance(s, dict)]
        current = next((s for s in sessions if s.get("session_id") == session_id), None)
        if current is None:
            current = {"session_id": session_id, "first": question, "turns": 0}
        sessions = [s for s in sessions if s.get("session_id") != session_id]
        current["turns"] = int(current.get("turns") or 0) + 1
        current["updated_at"] = time.time()
        return [current, *sessions][:MY_SESSIONS_KEPT]

    # -- a turn ----------------------------------------------------------------------------

    def respond(
        self,
        question: str,
        session_id: str | None,
        chat: list[Any],
        ids: dict[int, str],
        mine: list[dict[str, Any]] | None,
    ) -> Iterator[dict]:
        """Stream one turn into the chat; errors become a banner, never a traceback."""
        session_id = session_id or new_session_id()
        chat = list(chat or [])
        question = question or ""
        user = gr.ChatMessage(role="user", content=question)
        view = render.TurnView(question)
        try:
            items = self.agent.stream(question, session_id)
            first = next(items)  # the question is validated before anything runs
        except InvalidQuery as exc:
            gr.Warning(str(exc))
            yield {
                self.banner: gr.update(value=render.banner(str(exc), kind="warning"), visible=True),
                self.question: question,
            }
            return
        except ModelError as exc:
            yield self._model_failed(exc, question)
            return
        yield {
            self.chatbot: [*chat, user],
            self.question: "",
            self.banner: gr.update(value="", visible=False),
            self.critic_md: "",
            self.reward_md: "",
        }
        last = 0.0
        try:
            view.apply(*first)
            for kind, data in items:
                view.apply(kind, data)
                now = time.monotonic()
                if kind in ("thinking", "token") and now - last < STREAM_INTERVAL_S:
                    continue
                last = now
                update: dict[Any, Any] = {self.chatbot: [*chat, user, *view.messages(now)]}
                if kind == "event":
                    update[self.events_df] = _table(
                        render.EVENT_COLUMNS, render.event_rows(view.events)
                    )
                yield update
        except ModelError as exc:
            view.fail(exc.message)
            yield {
                **self._model_failed(exc, question),
                self.chatbot: [*chat, user, *view.messages()],
            }
            return
        payload = view.payload or {}
        turn_chat = [*chat, user, *view.messages()]
        ids = {**(ids or {}), len(chat): str(payload.get("query_id") or "")}
        mine = self._remember(mine, session_id, question)
        try:
            prompt = self.agent.prompt_messages(session_id)
        except UnknownTurn:
            prompt = []
        yield {
            self.chatbot: turn_chat,
            self.chat_msgs: turn_chat,
            self.query_ids: ids,
            self.my_sessions: mine,
            self.session_pick: gr.update(choices=self._session_choices(mine)),
            self.memory_df: _table(
                render.MEMORY_COLUMNS, render.memory_rows(payload.get("memory_hits") or [])
            ),
            self.prompt_json: prompt,
            self.events_df: _table(render.EVENT_COLUMNS, render.event_rows(view.events)),
            self.critic_md: render.critique_text(view.critique)
            or ("Critic: off" if self.agent.services.critic is None else ""),
        }

    def _model_failed(self, exc: ModelError, question: str) -> dict:
        """The model could not answer: say what and how to fix it; keep the question."""
        return {
            self.banner: gr.update(value=render.banner(exc.message, exc.fix), visible=True),
            self.question: question,
        }

    # -- ratings ---------------------------------------------------------------------------

    def _record(self, session_id: str | None, query_id: str | None, rating: int) -> dict:
        if not session_id or not query_id:
            return {
                self.banner: gr.update(
                    value=render.banner("There is no answer to rate yet.", kind="info"),
                    visible=True,
                )
            }
        try:
            result = self.agent.feedback(session_id, query_id, rating)
        except (UnknownTurn, ValueError) as exc:
            return {
                self.banner: gr.update(
                    value=render.banner(str(exc).strip("'\""), kind="warning"), visible=True
                )
            }
        state = self.agent.state(session_id)
        annotated = result["engrams_annotated"]
        return {
            self.reward_md: (
                f"Recorded reward **{rating}/5** for turn `{query_id}` "
                f"(`user.feedback` → `reward.event`; {annotated} memory engram(s) annotated)."
            ),
            self.events_df: _table(
                render.EVENT_COLUMNS, render.event_rows(state.get("event_log") or [])
            ),
            self.banner: gr.update(value="", visible=False),
        }

    def rate_last(
        self, rating: str | None, session_id: str | None, ids: dict[int, str] | None
    ) -> dict:
        if not rating:
            return {
                self.banner: gr.update(
                    value=render.banner("Pick a rating from 1 to 5 first.", kind="info"),
                    visible=True,
                )
            }
        last = ids[max(ids)] if ids else None
        return self._record(session_id, last, int(rating))

    def rate_message(
        self,
        session_id: str | None,
        chat: list[Any],
        ids: dict[int, str] | None,
        like: gr.LikeData,
    ) -> dict:
        """A rating picked on one answer's feedback menu: find that answer's turn."""
        if not isinstance(like.liked, str) or like.liked not in RATINGS:
            return {}
        index = like.index[0] if isinstance(like.index, list | tuple) else like.index
        starts = [i for i in sorted(ids or {}) if i <= int(index)]
        query_id = (ids or {}).get(starts[-1]) if starts else None
        return self._record(session_id, query_id, int(like.liked))

    # -- time travel -----------------------------------------------------------------------

    def _tt_error(self, message: str) -> str:
        return render.banner(message, kind="warning")

    def load_checkpoints(self, session_id: str | None) -> tuple[Any, ...]:
        session_id = (session_id or "").strip()
        try:
            rows = self.agent.checkpoints(session_id, limit=200) if session_id else []
        except UnknownTurn:
            rows = []
        if not rows:
            message = "No checkpoints: ask something first, or paste a session id."
            return (
                _table(render.CHECKPOINT_COLUMNS, []),
                gr.update(choices=[], value=None),
                self._tt_error(message),
            )
        return (
            _table(render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows)),
            gr.update(choices=render.checkpoint_choices(rows), value=None),
            f"{len(rows)} checkpoint(s) in session `{session_id}`.",
        )

    @staticmethod
    def pick_row(selected: gr.SelectData) -> Any:
        """Clicking a row of the checkpoint table picks that checkpoint."""
        row = selected.row_value or []
        return gr.update(value=row[0]) if row else gr.update()

    def show_checkpoint(self, session_id: str | None, checkpoint_id: str | None) -> tuple:
        if not session_id or not checkpoint_id:
            return {}, "", gr.update(), ""
        try:
            state = self.agent.state(session_id, checkpoint_id)
        except UnknownTurn as exc:
            return {}, "", gr.update(), self._tt_error(str(exc).strip("'\""))
        question, answer = self._original(session_id, checkpoint_id, state)
        original = f"**Question:** {neutralise(question)}\n\n**Answer:** {neutralise(answer)}"
        return render.state_view(state), original, question, ""

    def _original(
        self, session_id: str, checkpoint_id: str, state: dict[str, Any]
    ) -> tuple[str, str]:
        """The question at a checkpoint and the answer its branch went on to give."""
        question = str(state.get("query") or "")
        if state.get("answer"):
            return question, str(state["answer"])
        rows = self.agent.checkpoints(session_id, limit=1000)
        parent = {r["checkpoint_id"]: r.get("parent_id") for r in rows}
        for row in rows:  # newest first: the latest descendant that ended a turn
            if row["next"] or row.get("query_id") != state.get("query_id"):
                continue
            node: str | None = row["checkpoint_id"]
            while node and node != checkpoint_id:
                node = parent.get(node)
            if node == checkpoint_id:
                full = self.agent.state(session_id, row["checkpoint_id"])
                return question, str(full.get("answer") or "")
        return question, "(no answer on this branch yet)"

    def replay(self, session_id: str, checkpoint_id: str | None, current: str | None) -> dict:
        return self._rerun(session_id, checkpoint_id, None, current)

    def fork(
        self, session_id: str, checkpoint_id: str | None, edited: str, current: str | None
    ) -> dict:
        return self._rerun(session_id, checkpoint_id, edited or "", current)

    def _rerun(
        self,
        session_id: str,
        checkpoint_id: str | None,
        query: str | None,
        current: str | None,
    ) -> dict:
        session_id = (session_id or "").strip()
        if not session_id or not checkpoint_id:
            return {self.tt_status: self._tt_error("Load a session's checkpoints and pick one.")}
        try:
            payload = self.agent.replay(session_id, checkpoint_id, query=query)
        except (UnknownTurn, InvalidQuery) as exc:
            return {self.tt_status: self._tt_error(str(exc).strip("'\""))}
        except ModelError as exc:
            return {self.tt_status: render.banner(exc.message, exc.fix)}
        branch = set(payload.get("branch") or [])
        rows = self.agent.checkpoints(session_id, limit=200)
        verb = "Forked" if query is not None else "Replayed"
        new = (
            f"**Question:** {neutralise(str(payload.get('query') or ''))}\n\n"
            f"**Answer:** {neutralise(str(payload.get('answer') or ''))}\n\n"
            f"{render.critique_text(payload.get('critique'))}\n\n"
            f"_{verb} from `{checkpoint_id}`: {len(branch)} new checkpoint(s), marked "
            f"“new” in the list._"
        )
        out: dict[Any, Any] = {
            self.tt_new: new,
            self.tt_table: _table(
                render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows, frozenset(branch))
            ),
            self.tt_pick: gr.update(choices=render.checkpoint_choices(rows)),
            self.tt_status: f"{verb}: the session now continues from the new branch.",
        }
        if session_id == current:
            chat, ids = self._history_chat(session_id)
            out.update({self.chatbot: chat, self.chat_msgs: chat, self.query_ids: ids})
        return out


def build_ui(agent: Agent) -> gr.Blocks:
    """The Gradio app for ``agent``, queue configured; mount it (see ``local2.ui.server``)."""
    return LocalUI(agent).build()
