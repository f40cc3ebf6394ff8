"""web_fetch of documents served over HTTP on loopback: PDFs and office files read by the
document worker, passages picked across pages each under its page, citations to #page=N
(and the critic's check of them), caps and refusals; and ``local2 ask`` with a PDF URL
against the Ollama-protocol test server."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from local2.config._schema import DocumentsSettings, WebFetchSettings
from local2.critic import grounding_flags
from local2.documents import page_sections
from local2.errors import ToolError
from local2.tools._base import ToolContext
from local2.tools._web_fetch import WebFetch
from local2_testkit import documents as samples
from local2_testkit.hostile_documents import encrypted_pdf, truncated
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from local2_testkit.results import extracted_text
from local2_testkit.web_server import send
from tests.kit.helpers import local2

MILL = "The tidal mill at Eling was restored by the parish council in 1980 after the great flood."
PDF_MEDIA = "application/pdf"
DOCX_MEDIA = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def filler(page: int) -> list[str]:
    return [" ".join(samples.sentences(page, 6))]


def report_pdf(pages: int = 12, mill_page: int = 9) -> bytes:
    """A report whose one page about the tidal mill is ``mill_page``."""
    return samples.pdf_of(
        [filler(n) + ([MILL] if n == mill_page else []) for n in range(1, pages + 1)],
        title="Harbour report",
    )


def fetcher(**cfg: object) -> WebFetch:
    cfg.setdefault("allow_hosts", ["127.0.0.1"])
    cfg.setdefault("timeout_s", 20.0)
    return WebFetch(WebFetchSettings(**cfg))


def ask(question: str) -> ToolContext:
    return ToolContext("s1", "q1", query=question)


def test_a_pdf_is_read_and_the_passages_for_the_question_carry_their_pages(serve) -> None:
    server = serve({"/report.pdf": send(report_pdf(), PDF_MEDIA)})
    url = server.url("/report.pdf")
    result = fetcher(max_chars=1500)({"url": url}, ask("When was the tidal mill restored?"))
    text = extracted_text(result.text)
    assert result.text.startswith(f"URL: {url}\nExtracted text:\n")
    note = text.splitlines()[0]
    assert note == (f'[Document: PDF, 12 pages, "Harbour report"; cite a page as {url}#page=N]'), (
        note
    )
    pages = dict(page_sections(text))
    assert "1980" in pages[9] and "parish council" in pages[9]
    assert len(text) <= 1500 and len(pages) < 12  # picked, not the whole report
    document = result.data["document"]
    assert document["format"] == "pdf" and document["pages"] == 12
    assert 9 in document["pages_shown"]
    assert result.data["page_links"]["9"] == f"{url}#page=9"
    assert result.data["extraction"] == "document:pdf"


def test_passages_across_pages_each_under_its_own_page(serve) -> None:
    """Two pages answer the question: both are shown, each under its marker."""
    pages = [filler(n) for n in range(1, 9)]
    pages[1].append("The ferry keeper rang the bell at the pier every morning.")
    pages[6].append("In winter the ferry keeper rang the bell twice at the pier.")
    server = serve({"/f.pdf": send(samples.pdf_of(pages), PDF_MEDIA)})
    result = fetcher(max_chars=1500)({"url": server.url("/f.pdf")}, ask("ferry keeper bell pier"))
    sections = dict(page_sections(extracted_text(result.text)))
    assert "every morning" in sections[2] and "twice" in sections[7]


@pytest.mark.parametrize(
    ("sample", "media", "path"),
    [
        (samples.docx_sample, DOCX_MEDIA, "/a.docx"),
        (samples.pptx_sample, "application/octet-stream", "/deck.pptx"),  # vague type, by name
        (samples.odt_sample, "application/vnd.oasis.opendocument.text", "/a.odt"),
        (samples.epub_sample, "application/epub+zip", "/book.epub"),
        (samples.one_column_pdf, "application/octet-stream", "/download"),  # sniffed
    ],
)
def test_office_files_and_vaguely_labelled_documents_are_read(serve, sample, media, path) -> None:
    doc = sample()
    server = serve({path: send(doc.data, media)})
    result = fetcher(max_chars=50_000)({"url": server.url(path)})
    text = extracted_text(result.text)
    assert text.startswith("[Document: ")
    sections = page_sections(text)
    assert sections and sections[0][0] == 1
    first_words = " ".join(doc.pages[0].split()[:4])
    assert first_words in " ".join(text.split())


def test_a_document_over_the_document_cap_is_refused_naming_the_cap(serve) -> None:
    data = report_pdf(30)
    server = serve({"/big.pdf": send(data, PDF_MEDIA)})
    with pytest.raises(ToolError, match=r"max_document_bytes") as err:
        fetcher(max_document_bytes=len(data) // 2)({"url": server.url("/big.pdf")})
    assert f"{len(data) // 2:,}-byte" in str(err.value)
    assert err.value.fix  # what to do: add it as your own document, or raise the cap


def test_documents_get_their_own_larger_cap_than_pages(serve) -> None:
    """A PDF larger than a page may be is still read: the document cap applies."""
    data = report_pdf(40)
    assert len(data) > 2048
    server = serve({"/r.pdf": send(data, PDF_MEDIA)})
    result = fetcher(max_bytes=2048)({"url": server.url("/r.pdf")})
    assert result.data["bytes"] == len(data) and result.data["document"]["pages"] == 40


def test_unreadable_documents_get_a_clear_fetch_error(serve) -> None:
    server = serve(
        {
            "/locked.pdf": send(encrypted_pdf(), PDF_MEDIA),
            "/cut.pdf": send(truncated(report_pdf()), PDF_MEDIA),
            "/fake.pdf": send(b"%PDF-1.7\n%binary", PDF_MEDIA),
            "/ok.pdf": send(report_pdf(), PDF_MEDIA),
        }
    )
    f = fetcher()
    with pytest.raises(ToolError, match=r"^fetch error: The PDF is encrypted") as err:
        f({"url": server.url("/locked.pdf")})
    assert "password" in err.value.fix
    for path in ("/cut.pdf", "/fake.pdf"):
        with pytest.raises(ToolError, match=r"^fetch error: The file is not a readable PDF"):
            f({"url": server.url(path)})
    # ... and the next document reads as usual.
    assert f({"url": server.url("/ok.pdf")}).data["document"]["pages"] == 12


def test_a_document_may_take_longer_than_a_page(serve) -> None:
    """The fetch's deadline moves to document_timeout_s once the response is a document: a
    PDF trickling in for longer than a page's whole deadline is still read."""
    data = report_pdf()
    page_deadline = 1.0

    def slow_pdf(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", PDF_MEDIA)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        step = max(len(data) // 20, 1)
        for start in range(0, len(data), step):
            h.wfile.write(data[start : start + step])
            h.wfile.flush()
            time.sleep(2 * page_deadline / 20)  # twice a page's deadline in all

    server = serve({"/slow.pdf": slow_pdf})
    f = fetcher(timeout_s=page_deadline, document_timeout_s=120.0)
    assert f({"url": server.url("/slow.pdf")}).data["document"]["pages"] == 12


def test_the_critic_flags_a_cited_page_that_was_never_read(serve) -> None:
    server = serve({"/report.pdf": send(report_pdf(), PDF_MEDIA)})
    url = server.url("/report.pdf")
    result = fetcher(max_chars=1500)({"url": url}, ask("When was the tidal mill restored?"))
    call = {
        "id": "c1",
        "tool": "web_fetch",
        "args": {"url": url},
        "result": result.text,
        "error": None,
        "duration_s": 0.1,
    }
    shown = result.data["document"]["pages_shown"]
    unread = next(n for n in range(1, 13) if n not in shown)
    good = f"It was restored in 1980 ([page 9]({url}#page=9))."
    bad = f"It was restored in 1980 ([page {unread}]({url}#page={unread}))."
    assert grounding_flags(good, [call]) == []
    flags = grounding_flags(bad, [call])
    assert flags == [
        f"unread page: {url}#page={unread} (page {unread} was not among the pages read: "
        + ", ".join(str(n) for n in sorted(shown))
        + ")"
    ]


def test_ask_with_a_pdf_url_reads_it_and_cites_the_page(serve, tmp_path: Path) -> None:
    """The issue's scenario through the real parts: `local2 ask` with a PDF served on
    loopback, ChatOllama against the Ollama-protocol test server, the real web_fetch and
    document worker, the critic's grounding check."""
    server = serve({"/report.pdf": send(report_pdf(), PDF_MEDIA)})
    url = server.url("/report.pdf")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "web.yaml").write_text("fetch:\n  allow_hosts: ['127.0.0.1']\n")
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    with FakeOllama(RuleBrain()) as ollama:
        env = {
            "OLLAMA_HOST": ollama.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(conf),
        }
        asked = local2(
            "ask",
            f"Read {url} and tell me when the tidal mill was restored.",
            "--json",
            "--backend",
            "ollama",
            env=env,
        )
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    [fetch] = payload["tool_calls"]
    assert fetch["tool"] == "web_fetch" and fetch["error"] is None
    assert "[Page 9]" in fetch["result"] and "1980" in fetch["result"]
    assert f"{url}#page=9" in payload["answer"] and "1980" in payload["answer"]
    assert payload["critique"]["flags"] == []


def test_a_documents_limits_come_from_the_documents_settings(serve) -> None:
    """The reader's own limits hold for a fetched document too (pages here)."""
    server = serve({"/r.pdf": send(report_pdf(), PDF_MEDIA)})
    f = WebFetch(
        WebFetchSettings(allow_hosts=["127.0.0.1"], timeout_s=20.0),
        documents=DocumentsSettings(max_pages=5),
    )
    with pytest.raises(ToolError, match=r"documents\.max_pages"):
        f({"url": server.url("/r.pdf")})
