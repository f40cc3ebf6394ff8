"""The app's Watches tab: questions researched again on a schedule (docs/watch.md).

A self-contained part: :class:`WatchesTab` is given the agent (its watch desk, the people's
access) and lays itself out inside an open ``gr.Tab``. It lists the signed-in person's
watches with their next run and what their last run found changed, adds one (checked whole
first: a bad schedule or Apprise URL is refused with an example, and nothing is kept),
pauses, resumes and removes one, and lists the person's notices, unread ones marked, read
when they are marked so.

What a run found (titles, claims) comes from the web: it is shown with its Markdown
neutralised. Apprise targets are shown redacted only, as the desk gives them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import gradio as gr

from local2.contracts import NoticeView, Person, WatchRunView, WatchView
from local2.errors import Local2Error
from local2.ui.base import reading_table
from local2.ui.notices import notice_for
from local2.ui.safe_markdown import neutralise
from local2.ui.sign_in import person_of

if TYPE_CHECKING:
    from local2.service import Agent

COLUMNS = ["question", "when", "next run", "last run", "what changed", "unread", "id"]
WIDTHS: list[str | int] = [
    "23%",
    "19%",
    "14%",
    "13%",
    "13%",
    "6%",
    "12%",
]  # fit 1280 px without scrolling
UNREAD, READ = "●", "○"
BODY_LINES = 8  # of a notice's body, in the list (the run has it all)
EXAMPLES = "every Monday 07:00 · every 6 hours · 0 7 * * mon-fri"


def when(at: float | None, zone: str | None = None) -> str:
    """A moment as the watch's person reads it: in the watch's own time zone, named."""
    if at is None:
        return "-"
    try:
        tz = ZoneInfo(zone) if zone else None
    except (ZoneInfoNotFoundError, ValueError):
        tz = None
    moment = dt.datetime.fromtimestamp(at, tz).astimezone(tz)
    return moment.strftime("%Y-%m-%d %H:%M %Z").strip()


def changed_words(run: WatchRunView | None) -> str:
    """What a run found, in a few words (the counts), or how it ended."""
    if run is None:
        return "no run yet"
    changes = run["changes"]
    if run["status"] != "done" or changes is None:
        return run["status"]
    if changes["first_run"]:
        return f"first run: {len(changes['new_sources'])} sources"
    since = changes.get("looked_first_since")
    looked = f" (looked first since {since})" if since else ""
    if changes["nothing_new"]:
        return f"nothing new{looked}"
    counts = [
        (len(changes["new_sources"]), "new source"),
        (len(changes["new_claims"]), "new claim"),
        (len(changes["revised_claims"]), "revised"),
        (len(changes["no_longer_supported"]), "no longer supported"),
        (len(changes["sources_gone"]), "source gone"),
    ]
    return ", ".join(f"{n} {what}" for n, what in counts if n) + looked


def watch_rows(
    watches: Sequence[WatchView], last: dict[str, WatchRunView | None], unread: dict[str, int]
) -> list[list[Any]]:
    return [
        [
            w["question"],
            f"{w['schedule']} ({w['timezone']})",
            "paused" if w["paused"] else when(w["next_due"], w["timezone"]),
            when(_due(last.get(w["watch_id"])), w["timezone"]),
            changed_words(last.get(w["watch_id"])),
            unread.get(w["watch_id"], 0) or "",
            w["watch_id"],
        ]
        for w in watches
    ]


def _due(run: WatchRunView | None) -> float | None:
    return None if run is None else run["due"]


def notices_markdown(notices: Sequence[NoticeView]) -> str:
    """The notices, newest first, unread ones marked; their words are the web's, neutralised."""
    if not notices:
        return "_No notices yet: a watch's run tells you here what changed._"
    lines = []
    for n in notices:
        mark = UNREAD if n["unread"] else READ
        said = [neutralise(" ".join(line.split())) for line in n["body"].splitlines()]
        body = "  \n".join([line for line in said if line][:BODY_LINES])
        lines.append(
            f"{mark} **{neutralise(n['title'])}** ({when(n['created_at'])}, run "
            f"`{n['run_id']}`)  \n{body}"
        )
    return "\n\n".join(lines)


class WatchesTab:
    """The Watches tab: the person's watches and notices, listed when the tab is opened."""

    title = "Watches"
    tab_id = "watches"

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.access = agent.access
        self.proxied = bool(agent.settings.server.trusted_user_header)
        self.timezone = agent.settings.watch.timezone

    def person(self, request: gr.Request | None) -> Person:
        return person_of(self.access, self.proxied, request)

    # -- layout -----------------------------------------------------------------------------

    def build(self, item: gr.Tab) -> None:
        gr.Markdown(
            "Research a question again on a schedule. Each run is an ordinary research run; "
            "here you see first what changed since the last one.",
            elem_id="watches-intro",
        )
        with gr.Row():
            self.question = gr.Textbox(
                label="Question to watch", scale=4, elem_id="watches-question"
            )
            self.schedule = gr.Textbox(
                label="When",
                placeholder="every Monday 07:00",
                info=EXAMPLES,
                scale=2,
                elem_id="watches-schedule",
            )
            self.tz = gr.Textbox(
                label="Time zone", value=self.timezone, scale=1, elem_id="watches-tz"
            )
        with gr.Row():
            self.notify = gr.Textbox(
                label="Also tell (optional Apprise URL)",
                placeholder="ntfy://ntfy.example.org/my-topic or mailto://user:pass@host",
                scale=4,
                elem_id="watches-notify",
            )
            self.add = gr.Button("Add watch", variant="primary", scale=1, elem_id="watches-add")
        self.status = gr.Markdown("", elem_id="watches-status")
        self.table = reading_table(COLUMNS, "watches-table", column_widths=WIDTHS)
        with gr.Row():
            self.pick = gr.Textbox(label="Watch id (click a row)", scale=3, elem_id="watches-pick")
            self.pause = gr.Button("Pause / resume", scale=1, elem_id="watches-pause")
            self.remove = gr.Button("Remove", variant="stop", scale=1, elem_id="watches-remove")
            self.refresh = gr.Button("Refresh", scale=1, elem_id="watches-refresh")
        with gr.Accordion("Notices", open=True, elem_id="watches-notices-box"):
            self.notices = gr.Markdown("", elem_id="watches-notices")
            self.read_all = gr.Button("Mark all read", size="sm", elem_id="watches-read")
        listed = [self.table, self.notices, self.status]
        item.select(self.listed, None, listed)
        self.refresh.click(self.listed, None, listed)
        self.table.select(self.picked, None, [self.pick])
        adding = [self.question, self.schedule, self.tz, self.notify]
        self.add.click(self.add_watch, adding, [*listed, self.question])
        self.pause.click(self.toggle_pause, [self.pick], listed)
        self.remove.click(self.drop, [self.pick], [*listed, self.pick])
        self.read_all.click(self.mark_all_read, None, listed)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing to wire across tabs."""

    # -- handlers ---------------------------------------------------------------------------

    def listed(self, request: gr.Request | None = None, said: str = "") -> tuple[Any, str, str]:
        """The table, the notices and the status line for the person signed in."""
        try:
            person = self.person(request)
            desk = self.agent.watches
            watches = desk.watches(person)
            last: dict[str, WatchRunView | None] = {}
            for w in watches:
                runs = desk.show(person, w["watch_id"], 1)["runs"]
                last[w["watch_id"]] = runs[0] if runs else None
            notices = desk.notices(person)
        except Local2Error as exc:
            return [], "", notice_for(exc).markdown()
        unread: dict[str, int] = {}
        for n in notices:
            if n["unread"]:
                unread[n["watch_id"]] = unread.get(n["watch_id"], 0) + 1
        if not said:
            said = f"{len(watches)} watches." if watches else "No watches yet: add one above."
        return watch_rows(watches, last, unread), notices_markdown(notices), said

    def picked(self, event: gr.SelectData) -> str:
        row = event.row_value if isinstance(event.row_value, list) else []
        return str(row[-1]) if row else ""

    def add_watch(
        self, question: str, schedule: str, tz: str, notify: str, request: gr.Request | None = None
    ) -> tuple[Any, ...]:
        if not (question or "").strip() or not (schedule or "").strip():
            return (gr.update(), gr.update(), "Give a question and when to run it.", gr.update())
        targets = [notify.strip()] if (notify or "").strip() else []
        try:
            watch = self.agent.watches.add(
                self.person(request),
                question.strip(),
                schedule.strip(),
                timezone=(tz or "").strip() or None,
                targets=targets,
            )
        except Local2Error as exc:  # nothing kept: the form stays as typed, to fix
            return (gr.update(), gr.update(), notice_for(exc).markdown(), gr.update())
        said = f"Added `{watch['watch_id']}`: first run {when(watch['next_due'])}."
        return (*self.listed(request, said), "")

    def toggle_pause(self, watch_id: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        try:
            person = self.person(request)
            desk = self.agent.watches
            watch = desk.show(person, (watch_id or "").strip(), 1)["watch"]
            paused = watch["paused"]
            changed = (desk.resume if paused else desk.pause)(person, watch["watch_id"])
        except Local2Error as exc:
            return gr.update(), gr.update(), notice_for(exc).markdown()
        said = f"{'Resumed' if paused else 'Paused'} `{changed['watch_id']}`."
        return self.listed(request, said)

    def drop(self, watch_id: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        try:
            self.agent.watches.remove(self.person(request), (watch_id or "").strip())
        except Local2Error as exc:
            return gr.update(), gr.update(), notice_for(exc).markdown(), gr.update()
        said = f"Removed `{watch_id.strip()}` (its research runs stay)."
        return (*self.listed(request, said), "")

    def mark_all_read(self, request: gr.Request | None = None) -> tuple[Any, ...]:
        try:
            person = self.person(request)
            desk = self.agent.watches
            ids = [n["notice_id"] for n in desk.notices(person, unread=True, limit=500)]
            desk.mark_read(person, ids)
        except Local2Error as exc:
            return gr.update(), gr.update(), notice_for(exc).markdown()
        return self.listed(request, f"Marked {len(ids)} read." if ids else "Nothing unread.")
