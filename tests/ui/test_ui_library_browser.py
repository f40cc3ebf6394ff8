"""The Library tab in a real browser (Debian's chromium, Playwright) against the real
server: it lists what was read, newest first; search finds a fact deep in a kept PDF with
its page; the kept text opens at that page; pin, export (a download) and remove work, and
removed is gone from the index, the disk and every export the app keeps; a report's link to
a kept copy opens the tab at that entry."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.library import Fetched, Reader
from local2.service.agent import Agent
from local2.ui._library_exports import served_folder
from local2.ui._research_shown import report_view
from local2_testkit import documents as samples
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.browser import BROWSER_MARKS, app_served, open_page, shot, wait_text

FACT = "The Eling tidal mill grinds 400 kilograms of flour on a spring tide."
PDF_URL = "http://mills.example/eling-report.pdf"
PAGE_URL = "http://harbour.example/kelsby-bridge"

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("library-ui")
    fake = FakeOllama(RuleBrain(), chunk_delay_s=0.01).start()
    settings = load_settings(
        overrides={
            "system": {"ollama_host": fake.url, "data_dir": str(base / "data")},
            "generator": {"backend": "ollama"},
            "web": {"search": {"provider": "mock"}},
            "memory": {"embedder": "lexical"},
            "files": {"embedder": "lexical"},
        }
    )
    agent = Agent(settings, backend="ollama")
    library = agent.library.library
    pages = [[" ".join(samples.sentences(n, 5))] for n in range(1, 10)]
    pages[6].append(FACT)
    texts = tuple((n, " ".join(p)) for n, p in enumerate(pages, start=1))
    data = samples.pdf_of(pages, "Eling mill report")
    pdf = library.keep(
        Fetched(PDF_URL, PDF_URL, "Eling mill report", "pdf", texts, data),
        Reader("research", run_id="run-one"),
    )
    page = library.keep(
        Fetched(PAGE_URL, PAGE_URL, "Kelsby keeps its bridge", "html", ((1, "Kelsby voted."),)),
        Reader("research", run_id="run-two"),
    )
    library.settle()
    with app_served(agent) as url:
        yield {"url": url, "agent": agent, "pdf": pdf, "page": page}
    agent.close()
    fake.stop()


def test_the_library_tab_lists_searches_opens_and_removes(
    app: dict[str, Any], browser: Any
) -> None:
    page = open_page(browser, app["url"], width=1400, height=1300)
    page.get_by_role("tab", name="Library").click()
    wait_text(page, "#library-entries", "Eling mill report")
    table = page.inner_text("#library-entries")
    assert table.index("Kelsby keeps its bridge") < table.index("Eling mill report")  # newest first
    assert "mills.example" in table and "harbour.example" in table

    page.fill(
        "#library-query textarea", "how much flour does the tidal mill grind on a spring tide"
    )
    page.click("#library-search")
    wait_text(page, "#library-hits", "page 7")
    hits = page.inner_text("#library-hits")
    assert hits.startswith("Eling mill report (lib-")  # the best hit first, with its page
    assert "400 kilograms" in hits and "by run run-one" in hits

    # Only what applies: Export (the library holds something), no Open, Pin or Remove
    # until an entry is picked; picked, they show.
    entry_buttons = ["#library-open", "#library-pin", "#library-remove"]
    assert page.is_visible("#library-export")
    assert [b for b in entry_buttons if page.is_visible(b)] == []
    pdf = app["pdf"]["id"]
    page.fill("#library-pick textarea", pdf)
    page.wait_for_selector("#library-open", state="visible")
    assert all(page.is_visible(b) for b in entry_buttons)
    page.fill("#library-page input", "7")
    page.click("#library-open")
    page.wait_for_function(
        "(fact) => document.querySelector('#library-text textarea')?.value.includes(fact)", arg=FACT
    )
    wait_text(page, "#library-status", "page 7")
    assert page.is_visible("#library-original")
    shot(page, "library-tab-1400-wide")

    page.click("#library-pin")
    wait_text(page, "#library-status", f"Pinned {pdf}")
    library = app["agent"].library.library
    assert library.get("local", pdf)["pinned"]
    page.click("#library-export")
    wait_text(page, "#library-status", "Exported")
    [kept] = exports()  # one export, where Gradio serves it from (no copy of its own)
    with page.expect_download() as download:
        page.click("#library-zip")
    got = zipfile.ZipFile(download.value.path())
    index = json.loads(got.read("library.json"))
    assert {e["id"]: e["pinned"] for e in index["entries"]} == {pdf: True, app["page"]["id"]: False}
    assert got.read(f"text/{pdf}.txt").decode().count("[Page ") == 9

    page.click("#library-remove")
    wait_text(page, "#library-status", f"Removed {pdf}")
    page.wait_for_function(
        "() => !document.querySelector('#library-entries').innerText.includes('Eling mill report')"
    )
    assert [e["id"] for e in library.entries("local")] == [app["page"]["id"]]
    assert all(h["entry_id"] != pdf for h in library.search("local", "flour spring tide"))
    assert not (library.shelf("local").folder / "originals" / pdf).exists()
    # removed means gone from every export the app keeps too, and its download with it
    assert not kept.exists() and exports() == [] and not page.is_visible("#library-zip")
    for folder in (Path(app["agent"].settings.data_dir), served_folder()):
        for file in folder.rglob("*.zip"):
            assert not any(pdf in name for name in zipfile.ZipFile(file).namelist()), file

    # a report's reference to a kept copy opens the app at the Library tab, the entry shown
    entry = app["page"]["id"]
    report = report_view({"report": f"[1] [Kelsby]({PAGE_URL}) — kept copy `{entry}`"})
    [href] = re.findall(r"\]\((\?library=[^)]+)\)", report)
    page.goto(f"{app['url']}/{href}")
    page.wait_for_function(
        "() => document.querySelector('#library-text textarea')?.value.includes('Kelsby voted.')"
    )
    assert page.input_value("#library-pick textarea") == entry
    assert page.get_by_role("tab", name="Library").get_attribute("aria-selected") == "true"


def exports() -> list[Path]:
    return sorted((served_folder() / "library-exports").glob("*/*/library.zip"))
