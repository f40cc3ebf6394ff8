"""The Research tab's sources and scope, in chromium at 1280x900 against the real Gradio app:
a newcomer sees one folded line ("More sources, dates and sites"), not a wall of controls;
opened, arXiv and PubMed are ticked and a date typed; the run searches them beside the
loopback web, its sources panel shows each source's date or "undated", where it came from
and the retraction mark, the report says its scope, the references download as BibTeX and
RIS (read back by bibtexparser and rispy) and the report as PDF and Word (read back by the
project's document reader and python-docx). Screenshots: ``I56_SHOTS`` (default a temp
folder outside the repository)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import bibtexparser
import docx
import rispy

from local2.config import load_settings
from local2.documents import read_document
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.browser import BROWSER_MARKS, app_served
from tests.research.sources_helpers import PLANTED, scholarly_agent, scholarly_apis

pytestmark = BROWSER_MARKS

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "Does sleep consolidate declarative memory?"


def shot(page: Any, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_a_newcomer_sees_one_line_and_a_run_shows_dates_scope_and_downloads(
    tmp_path: Path, browser: Any
) -> None:
    shots = Path(os.environ.get("I56_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with (
        FakeOllama(ResearchBrain(), chunk_delay_s=0.01) as fake,
        LoopbackWeb(load_pages(CORPUS)) as web,
        scholarly_apis() as apis,
    ):
        agent = scholarly_agent(fake, web, apis, tmp_path / "data")
        with app_served(agent) as url:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(url)
            page.click("button[role=tab]:has-text('Research')")
            page.wait_for_selector("#research-question textarea")
            page.wait_for_timeout(400)
            shot(page, shots, "i56-01-fresh")
            # folded: one line, none of its controls shown
            assert page.is_visible("#research-scope")
            assert "More sources, dates and sites" in page.inner_text("#research-scope")
            for hidden in ("#research-more-sources", "#research-since", "#research-domains"):
                assert not page.is_visible(hidden), hidden
            assert not page.is_visible("#research-download-bibtex")

            page.get_by_text("More sources, dates and sites").click()
            page.wait_for_selector("#research-more-sources input")
            for name in ("arXiv", "PubMed"):
                page.click("#research-more-sources input")
                page.click(f"ul[role=listbox] li:has-text('{name}')")
            page.fill("#research-since textarea, #research-since input", "2024-01-01")
            page.keyboard.press("Escape")
            page.wait_for_timeout(400)  # the list closed
            shot(page, shots, "i56-02-scope-open")
            page.uncheck("#research-review input")
            page.fill("#research-question textarea", QUESTION)
            page.click("#research-run")
            page.wait_for_function(
                "() => document.querySelector('#research-status')?.innerText.includes('finished')",
                timeout=90_000,
            )
            page.wait_for_selector("#research-download-bibtex", state="visible")
            shot(page, shots, "i56-03-report")

            sources = page.inner_text("#research-sources")
            assert "2024-02-14 · arxiv · preprint" in sources, sources
            assert "pubmed" in sources and "RETRACTED" in sources, sources
            assert "undated" in sources  # the loopback web's pages carry no date
            assert PLANTED not in page.inner_text("body")
            report = page.inner_text("#research-report")
            assert "Scope: Sources published on or after 2024-01-01." in report, report[:400]

            with page.expect_download() as bib:
                page.click("#research-download-bibtex")
            entries = bibtexparser.parse_string(Path(str(bib.value.path())).read_text()).entries
            assert any(e.fields_dict.get("doi") for e in entries)
            with page.expect_download() as ris:
                page.click("#research-download-ris")
            assert rispy.loads(Path(str(ris.value.path())).read_text())
            # the report itself beside the Markdown: the PDF read back by our reader
            with page.expect_download() as pdf:
                page.click("#research-download-pdf")
            assert pdf.value.suggested_filename.endswith("-report.pdf")
            data = Path(str(pdf.value.path())).read_bytes()
            read = read_document(data, load_settings().documents, name="report.pdf")
            text = " ".join(" ".join(p.text for p in read.pages).split())
            assert QUESTION in text and "References" in text and "RETRACTED" in text
            with page.expect_download() as word:
                page.click("#research-download-docx")
            document = docx.Document(str(word.value.path()))
            assert "References" in [p.text for p in document.paragraphs]
            assert page.is_visible("#research-download-html")
            context.close()
        agent.close()
