"""Documents in the app, in a real browser (Debian's chromium, Playwright) against the real
server: a PDF dropped on the attach box is kept and attached to the conversation, and its
passage for the question appears as a document hit (file, page, score) beside the memory
hits; a document that cannot be read is refused with a banner; Index folders moves a
progress bar while the server keeps answering. Screenshots go to the run's temp folder;
docs/documents.md's picture is taken by ``docs/images/take_screenshots.py``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import DocumentsSettings, load_settings
from local2.documents import Document, read_document
from local2.files import Folders
from local2.service.agent import Agent
from local2_testkit import documents as samples
from local2_testkit.hostile_documents import encrypted_pdf
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    app_served,
    ask,
    chat_to_top,
    open_page,
    shot,
    wait_text,
)

FACT = "The Eling tidal mill was restored by the parish council in 1980."

pytestmark = BROWSER_MARKS


class HeldReader:
    """The real document reader, held at its first document until released (a long
    build, without waiting on the clock)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def __call__(self, data: bytes, cfg: DocumentsSettings, *, name: str) -> Document:
        self.started.set()
        assert self.release.wait(120), "the test never released the reader"
        return read_document(data, cfg, name=name)


def parish_report(path: Path) -> Path:
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 6)]
    pages[2].append(FACT)
    path.write_bytes(samples.pdf_of(pages, "Parish report"))
    return path


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("documents-ui")
    papers = base / "papers"
    papers.mkdir()
    for n in range(1, 13):
        pages = [[" ".join(samples.sentences(100 * n + p, 3))] for p in range(1, 3)]
        (papers / f"minutes-{n:02d}.pdf").write_bytes(samples.pdf_of(pages))
    fake = FakeOllama(RuleBrain(), chunk_delay_s=0.01).start()
    settings = load_settings(
        overrides={
            "system": {"ollama_host": fake.url, "data_dir": str(base / "data")},
            "generator": {"backend": "ollama"},
            "web": {"search": {"provider": "mock"}},
            "memory": {"embedder": "lexical"},
            "files": {"roots": [str(papers)], "auto_index": False},
        }
    )
    reader = HeldReader()
    agent = Agent(settings, backend="ollama", files=Folders(settings, reader=reader))
    with app_served(agent) as url:
        yield {"url": url, "agent": agent, "reader": reader, "base": base}
    reader.release.set()
    agent.close()
    fake.stop()


def attach(page: Any, *paths: Path) -> None:
    page.set_input_files("#local2-attach input[type=file]", [str(p) for p in paths])


def test_a_dropped_pdf_gives_document_hits_beside_memory_hits(
    app: dict[str, Any], browser: Any, tmp_path: Path
) -> None:
    app["reader"].release.set()  # this test reads documents at once
    page = open_page(browser, app["url"], width=1280, height=1250)
    attach(page, parish_report(tmp_path / "Parish report.pdf"))
    wait_text(page, "#local2-attached", "Parish report.pdf (PDF, 5 pages)")
    ask(page, "When was the Eling tidal mill restored?")
    wait_text(page, "#local2-chat", "1980")
    wait_text(page, "#local2-document-hits", "my-documents/Parish report.pdf")
    hits = page.inner_text("#local2-document-hits")
    assert "page 3" in hits and "Eling" in hits
    assert "Parish report.pdf, page 3" in page.inner_text("#local2-chat")
    page.locator("#local2-chat").scroll_into_view_if_needed()
    chat_to_top(page)
    shot(page, "document-hits-1280-wide")
    # What the person sees is what the API says: the document is theirs, attached here.
    session = page.inner_text("#local2-session code").strip()
    [record] = app["agent"].documents.own_documents.records("local")
    assert record["sessions"] == [session] and record["pages"] == 5

    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted_pdf())
    attach(page, locked)
    wait_text(page, "#local2-banner", "encrypted")
    assert "locked.pdf" not in page.inner_text("#local2-attached")
    assert [r["name"] for r in app["agent"].documents.own_documents.records("local")] == [
        "Parish report.pdf"
    ]
    page.context.close()


def test_index_folders_shows_progress_while_the_server_answers(
    app: dict[str, Any], browser: Any
) -> None:
    reader = app["reader"]
    reader.release.clear()
    reader.started.clear()
    page = open_page(browser, app["url"], width=1280, height=900)
    page.click("button:has-text('Folders')")
    page.click("#local2-index")
    assert reader.started.wait(60)  # the build is held at its first document
    page.wait_for_function("document.body.innerText.includes('Indexing papers/minutes-01.pdf')")
    with httpx.Client(base_url=app["url"], timeout=30) as client:  # the server still answers
        assert client.get("/health").json()["status"] == "ok"
    reader.release.set()
    wait_text(page, "#local2-index-report", "12 files: 12 added", timeout=120_000)
    page.context.close()
