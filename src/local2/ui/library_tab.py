"""The app's Library tab: what was read, kept (docs/library.md).

A self-contained part: :class:`LibraryTab` is given the agent (its library desk, the people's
access, whether names come from a proxy) and the app's tabs, lays itself out inside an open
``gr.Tab`` and wires its own events. It shows the signed-in person's entries, newest first
(title, site, when read, size, how often cited), a search whose hits name their page and when
they were read, an entry's kept text (all of it or one page) and its original file, and Pin,
Remove and Export, each shown only when it applies (Open, Pin and Remove once an entry is
picked, Export once something is kept); an empty library says how things get into it.

Kept text is what a page said: it is shown as plain text in a read-only box, titles and
passages with their Markdown neutralised, and nothing loads by itself.

A report's reference read from the library links to its kept copy (:func:`kept_links`):
``?library=<id>`` opens the app at this tab with that entry shown (:meth:`LibraryTab.opened`).
The export is a short-lived download (:mod:`local2.ui.library_exports`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr

from local2.contracts import LibraryEntry, LibraryHit, Person
from local2.errors import Local2Error
from local2.ui.base import reading_table
from local2.ui.library_exports import ExportFiles
from local2.ui.notices import notice_for
from local2.ui.research_steer import HIDE, shown
from local2.ui.safe_markdown import neutralise
from local2.ui.sign_in import person_of

if TYPE_CHECKING:
    from local2.service import Agent

LEGACY_EXPORTS = "exports"  # <data_dir>/exports/<person>/library.zip, kept forever before
COLUMNS = ["title", "site", "read", "size", "cited", "pinned", "id"]
OPEN_PARAM = "library"  # ?library=<id>: the app opens at this tab, that entry shown
ENTRY_ID = r"lib-[0-9a-f]{12}"
EMPTY = (
    "Nothing kept yet. A research run keeps each page it reads here (so do chat turns, "
    "with `library.keep: all`): run one in the Research tab, then Refresh."
)
_KEPT = re.compile(rf"kept copy `({ENTRY_ID})`")


def is_entry_id(value: str) -> bool:
    return re.fullmatch(ENTRY_ID, value) is not None


def when(at: float) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def size(n: int) -> str:
    return f"{n / 1024:,.0f} KB" if n >= 1024 else f"{n} B"


def entry_rows(entries: Sequence[LibraryEntry]) -> list[list[Any]]:
    return [
        [
            e["title"],
            e["site"],
            f"{when(e['last_read'])} ({len(e['readings'])}x)",
            size(e["bytes"]),
            e["cited"],
            "yes" if e["pinned"] else "",
            e["id"],
        ]
        for e in entries
    ]


def kept_link(entry_id: str) -> str:
    """A link that opens the app at the Library tab with the entry shown."""
    return f"[`{entry_id}`](?{OPEN_PARAM}={entry_id})"


def kept_links(report: str) -> str:
    """A report's references to kept copies (``kept copy `lib-...```) made links to them."""
    return _KEPT.sub(lambda m: f"kept copy {kept_link(m.group(1))}", report)


def hits_markdown(hits: Sequence[LibraryHit]) -> str:
    """Search hits as Markdown: each names its entry, page, when read and by which runs."""
    if not hits:
        return "_Nothing found in your library._"
    lines = []
    for n, hit in enumerate(hits, start=1):
        page = f", page {hit['page']}" if hit["page"] else ""
        runs = f" by run {', '.join(hit['runs'][-3:])}" if hit["runs"] else ""
        passage = neutralise(" ".join(hit["passage"].split())[:500])
        lines.append(
            f"{n}. **{neutralise(hit['title'])}** (`{hit['entry_id']}`{page}, read "
            f"{when(hit['read_at'])}{runs})  \n   {passage}"
        )
    return "\n".join(lines)


class LibraryTab:
    """The Library tab: what was read, listed when the tab is opened, and opened at an entry
    by a link (``?library=<id>``, switching ``tabs``)."""

    title = "Library"
    tab_id = "library"

    def __init__(self, agent: Agent, tabs: gr.Tabs) -> None:
        desk = agent.library
        self.desk = desk
        self.access = agent.access
        self.proxied = bool(agent.settings.server.trusted_user_header)
        self.data_dir = Path(agent.settings.data_dir)
        self.tabs = tabs
        self.exports = ExportFiles()
        desk.library.forgotten.append(self.exports.drop)  # an entry gone: the export too
        for old in (self.data_dir / LEGACY_EXPORTS).glob("*/library.zip"):
            old.unlink(missing_ok=True)

    def person(self, request: gr.Request | None) -> Person:
        return person_of(self.access, self.proxied, request)

    # -- layout -----------------------------------------------------------------------------

    def build(self, item: gr.Tab) -> None:
        self._build()
        item.select(self.list_entries, None, self.listed)

    def wire(self, demo: gr.Blocks) -> None:
        """The app opened at a link to a kept copy: this tab, the entry shown."""
        opened = [self.tabs, self.pick, self.text, self.original, self.status]
        demo.load(self.opened, None, opened)

    def _build(self) -> None:
        gr.Markdown(
            "What research runs read (and chat turns, with `library.keep: all`), kept: "
            "search it, open the kept text or the original, pin what must stay, remove "
            "what must go, export it all."
        )
        with gr.Row():
            self.query = gr.Textbox(label="Search your library", scale=5, elem_id="library-query")
            self.search_button = gr.Button("Search", scale=1, elem_id="library-search")
            self.refresh = gr.Button("Refresh", scale=1, elem_id="library-refresh")
        self.hits = gr.Markdown("", elem_id="library-hits")
        self.table = reading_table(COLUMNS, "library-entries")
        with gr.Row():
            self.pick = gr.Textbox(label="Entry id", scale=3, elem_id="library-pick")
            self.page = gr.Number(
                label="Page (0: all)", precision=0, minimum=0, scale=1, elem_id="library-page"
            )
            # Shown only when they apply: Open, Pin and Remove once an entry is picked,
            # Export once the library holds something (hidden by research_steer's class).
            hidden = [HIDE]
            self.open = gr.Button("Open", scale=1, elem_id="library-open", elem_classes=hidden)
            self.pin = gr.Button("Pin / unpin", scale=1, elem_id="library-pin", elem_classes=hidden)
            self.remove = gr.Button(
                "Remove", variant="stop", scale=1, elem_id="library-remove", elem_classes=hidden
            )
            self.export = gr.Button(
                "Export", scale=1, elem_id="library-export", elem_classes=hidden
            )
        self.status = gr.Markdown("", elem_id="library-status")
        self.text = gr.Textbox(
            label="Kept text (as it was read: outside content)",
            lines=12,
            max_lines=30,
            interactive=False,
            elem_id="library-text",
        )
        with gr.Row():
            self.original = gr.DownloadButton(
                "Original file", visible=False, elem_id="library-original"
            )
            self.zip = gr.DownloadButton("Download export", visible=False, elem_id="library-zip")
        self._wire()

    @property
    def listed(self) -> list[Any]:
        """What a listing updates: the table, the status and whether Export applies."""
        return [self.table, self.status, self.export]

    def _wire(self) -> None:
        self.refresh.click(self.list_entries, None, self.listed)
        self.pick.change(self.applies, [self.pick], [self.open, self.pin, self.remove])
        for trigger in (self.search_button.click, self.query.submit):
            trigger(self.search, [self.query], [self.hits])
        self.table.select(self.picked, None, [self.pick])
        self.open.click(self.show, [self.pick, self.page], [self.text, self.original, self.status])
        self.pin.click(self.toggle_pin, [self.pick], self.listed)
        self.remove.click(self.drop, [self.pick], [*self.listed, self.text, self.pick, self.zip])
        self.export.click(self.export_zip, None, [self.zip, self.status])

    # -- handlers ---------------------------------------------------------------------------

    def list_entries(self, request: gr.Request | None = None) -> tuple[Any, str, Any]:
        """The entries, what the list says (how things get in, when empty), and Export
        shown only when there is something to export."""
        try:
            entries = self.desk.entries(self.person(request))
        except Local2Error as exc:
            return [], notice_for(exc).markdown(), shown(False)
        said = f"{len(entries)} entries." if entries else EMPTY
        return entry_rows(entries), said, shown(bool(entries))

    def applies(self, entry_id: str | None) -> tuple[Any, Any, Any]:
        """Open, Pin and Remove, shown once an entry is picked."""
        picked = bool((entry_id or "").strip())
        return shown(picked), shown(picked), shown(picked)

    def search(self, query: str, request: gr.Request | None = None) -> str:
        if not (query or "").strip():
            return ""
        try:
            return hits_markdown(self.desk.search(self.person(request), query.strip()))
        except Local2Error as exc:
            return notice_for(exc).markdown()

    def picked(self, event: gr.SelectData) -> str:
        row = event.row_value if isinstance(event.row_value, list) else []
        return str(row[-1]) if row else ""

    def show(
        self, entry_id: str, page: float | None, request: gr.Request | None = None
    ) -> tuple[str, Any, str]:
        try:
            person = self.person(request)
            found = self.desk.page(person, (entry_id or "").strip(), int(page) if page else None)
            original = self.desk.original(person, found["entry"]["id"])
        except Local2Error as exc:
            return "", gr.update(visible=False), notice_for(exc).markdown()
        entry = found["entry"]
        where = f", page {found['page']}" if found["page"] else ""
        said = f"**{neutralise(entry['title'])}**{where}: {neutralise(entry['url'])}"
        download = (
            gr.update(value=str(original), visible=True) if original else gr.update(visible=False)
        )
        return found["text"], download, said

    def toggle_pin(self, entry_id: str, request: gr.Request | None = None) -> tuple[Any, str, Any]:
        try:
            person = self.person(request)
            entry = self.desk.get(person, (entry_id or "").strip())
            entry = self.desk.pin(person, entry["id"], not entry["pinned"])
        except Local2Error as exc:
            return gr.update(), notice_for(exc).markdown(), gr.update()
        rows, _said, export = self.list_entries(request)
        return rows, f"{'Pinned' if entry['pinned'] else 'Unpinned'} `{entry['id']}`.", export

    def drop(self, entry_id: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        """Remove the entry, and with it the person's export (it holds the entry)."""
        try:
            entry = self.desk.remove(self.person(request), (entry_id or "").strip())
        except Local2Error as exc:
            return gr.update(), notice_for(exc).markdown(), *(gr.update(),) * 4
        rows, _said, export = self.list_entries(request)
        said = f"Removed `{entry['id']}`: {neutralise(entry['title'])}."
        return rows, said, export, "", "", gr.update(value=None, visible=False)

    def export_zip(self, request: gr.Request | None = None) -> tuple[Any, str]:
        """The person's library as a zip to download, offered for a few minutes."""
        try:
            person = self.person(request)
            data = self.desk.export(person)
        except Local2Error as exc:
            return gr.update(visible=False), notice_for(exc).markdown()
        path = self.exports.write(person.name, data)
        minutes = round(self.exports.ttl_s / 60)
        said = f"Exported {size(len(data))}: download it within {minutes} minutes."
        return gr.update(value=str(path), visible=True), said

    def opened(self, request: gr.Request | None = None) -> tuple[Any, ...]:
        """The app opened with ``?library=<id>`` (a report's link to a kept copy): this tab,
        the entry shown; without it, nothing changes."""
        wanted = str(dict(getattr(request, "query_params", None) or {}).get(OPEN_PARAM) or "")
        if not is_entry_id(wanted):  # none, or not an entry id at all: left as it is
            return (gr.update(),) * 5
        text, original, said = self.show(wanted, None, request)
        return gr.Tabs(selected="library"), wanted, text, original, said
