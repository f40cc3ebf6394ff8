"""Documents in the app: attach them to the conversation (drop them on the box under the
question, or click it to choose), see each turn's document hits beside the memory hits, and
index the configured folders with a progress bar.

A document dropped here is the signed-in person's (``agent.documents``): read, kept and
indexed, and attached to this tab's session, so each question of the session searches it;
the file tools find it in their other sessions too (``my-documents/``). One that cannot be
read, or is over a limit, is refused with a banner saying why, and nothing of it is kept.
Gradio's own copy of the upload is removed once the document is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from local2.contracts import DocumentHit, DocumentRecord, Person
from local2.errors import Local2Error
from local2.service import Agent
from local2.ui.base import UIPart, reading_table, table
from local2.ui.safe_markdown import neutralise
from local2.ui.session_state import SessionState

DOCUMENT_COLUMNS = ["file", "page", "found by", "passage"]
ACCEPTED = [".pdf", ".docx", ".pptx", ".odt", ".epub", ".html", ".htm", ".md", ".txt"]
PASSAGE_CHARS = 400  # shown of a passage (search finds ~360); the model sees its chunk whole
INDEX_PROGRESS = gr.Progress()  # Gradio shows a bar for a handler taking one as a default


def document_rows(hits: Sequence[DocumentHit]) -> list[list[Any]]:
    """The turn's document hits as table rows, in ``local2 search``'s order (fused ranks,
    not similarity: hence why each was found) and with its passage (the sentences that
    answer, not the chunk's first lines): file, page (``slide 3``), found by
    (``similarity 0.61; words #1, meaning #2``, as the search tool says it), passage."""
    rows = []
    for hit in hits:
        page = hit.get("page")
        unit = hit.get("unit") or "page"
        text = " ".join(str(hit.get("passage") or hit.get("text") or "").split())
        short = text if len(text) <= PASSAGE_CHARS else text[: PASSAGE_CHARS - 1] + "…"
        rows.append(
            [
                hit.get("file", ""),
                f"{unit} {page}" if page is not None else "",
                found_by(hit),
                short,
            ]
        )
    return rows


def found_by(hit: DocumentHit) -> str:
    """``similarity 0.61; words #1, meaning #2``: what ``search_files`` says of a hit."""
    said = f"similarity {float(hit.get('score') or 0.0):.2f}"
    why = hit.get("found_by")
    return f"{said}; {why}" if why else said


def attached_text(records: Sequence[DocumentRecord]) -> str:
    """What is attached to this conversation, one line each (names are the person's own
    words: shown as text, never as Markdown or HTML)."""
    if not records:
        return ""
    lines = [
        f"- {neutralise(r['name'])} ({r['format'].upper()}, {r['pages']} "
        f"{'page' if r['pages'] == 1 else 'pages'})"
        for r in records
    ]
    return "**Attached to this conversation** (searched for each question):\n" + "\n".join(lines)


class Attachments(UIPart):
    """The attach box, the attached list, the document hits panel and Index folders."""

    def __init__(self, agent: Agent, state: SessionState, banner: gr.Markdown) -> None:
        super().__init__(agent)
        self.state = state
        self.banner = banner
        self.index_btn: gr.Button | None = None  # with folders configured
        self.index_md: gr.Markdown | None = None

    def build_attach(self) -> None:
        """The attach box and what is attached, under the question."""
        self.attach_box = gr.File(
            label="Attach documents: drop them here, or click to choose",
            file_count="multiple",
            file_types=ACCEPTED,
            height=110,
            visible=self.agent.documents.on,
            elem_id="local2-attach",
        )
        self.attached_md = gr.Markdown("", elem_id="local2-attached")

    def build_hits(self) -> None:
        """The document hits of the turn (and Index folders), among the turn's panels."""
        with gr.Accordion("Document hits of this turn", open=True):
            self.document_df = reading_table(
                DOCUMENT_COLUMNS,
                "local2-document-hits",
                column_widths=["20%", "13%", "19%", "48%"],
                max_height=800,  # attached_k hits of ~360 characters: all in view
            )
        folders = self.agent.documents.files
        if folders is not None and folders.configured:
            with gr.Accordion("Folders", open=False):
                roots = ", ".join(f"`{r.label}/`" for r in folders.sandbox.roots)
                gr.Markdown(f"The file tools read {roots}. Indexing reads only what changed.")
                self.index_btn = gr.Button("Index folders", size="sm", elem_id="local2-index")
                self.index_md = gr.Markdown("", elem_id="local2-index-report")

    def wire(self) -> None:
        self.attach_box.upload(
            self.attach,
            [self.attach_box, self.state.session_id],
            [self.attach_box, self.attached_md, self.banner],
            concurrency_limit=self.settings.concurrency_limit,
        )
        if self.index_btn is not None and self.index_md is not None:
            self.index_btn.click(self.index_folders, None, [self.index_md, self.banner])

    def attach(
        self,
        files: list[str] | None,
        session_id: str | None,
        request: gr.Request | None = None,
    ) -> dict[Any, Any]:
        """Keep each dropped document as the signed-in person's, attached to this session."""
        refused: Local2Error | None = None
        person: Person | None = None
        try:
            person = self.person(request)
            for path in files or []:
                upload = Path(path)
                self.agent.documents.add(person, upload.name, upload.read_bytes(), session_id)
                upload.unlink(missing_ok=True)  # kept in the person's documents now
        except Local2Error as exc:
            refused = exc
        finally:
            for path in files or []:  # a refused upload leaves no copy behind either
                Path(path).unlink(missing_ok=True)
        shown = self._attached(person, session_id)
        banner = self.notice(refused) if refused else gr.update(value="", visible=False)
        return {self.attach_box: None, self.attached_md: shown, self.banner: banner}

    def _attached(self, person: Person | None, session_id: str | None) -> str:
        if person is None or not session_id:
            return ""
        return attached_text(self.agent.documents.attached(person, session_id))

    def view(
        self, session_id: str, hits: Sequence[DocumentHit], person: Person | None
    ) -> dict[Any, Any]:
        """The attached list and the document hits of a session's last turn."""
        return {
            self.attached_md: self._attached(person, session_id),
            self.document_df: table(DOCUMENT_COLUMNS, document_rows(hits)),
        }

    def index_folders(self, progress: gr.Progress = INDEX_PROGRESS) -> dict[Any, Any]:
        """Index the configured folders, the bar moving file by file; the server keeps
        answering meanwhile (this handler runs in a worker thread, documents in theirs)."""

        def step(done: int, total: int, current: str) -> None:
            desc = f"Indexing {current}" if current else "Indexed"
            progress((done, total), desc=desc, unit="files")

        try:
            report = self.agent.documents.index_folders(step)
        except Local2Error as exc:
            return {self.index_md: "", self.banner: self.notice(exc)}
        skipped = "".join(f"\n- skipped {neutralise(line)}" for line in report.skipped)
        summary = (
            f"{report.files} files: {report.added} added, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.removed} removed "
            f"({report.chunks} passages, {report.seconds:.1f} s){skipped}"
        )
        return {self.index_md: summary, self.banner: gr.update(value="", visible=False)}
