"""Research and the library through the real parts: a run on a loopback web keeps what it
read; the same question with ``sources: library``, the web and its search still up, cites
the same sources from their kept copies with no request at all (counted at the server and
by the fetch guard); ``keep: off`` keeps nothing; a refused page is not kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.contracts import collect_research
from local2.library import ReadingLibrary
from local2.service.research._research import Research
from local2.tools._web_fetch import NetGuard
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "Why did Kelsby keep its harbour swing bridge?"


@pytest.fixture
def vets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL the fetch guard was asked to let through."""
    seen: list[str] = []
    real = NetGuard.vet

    def counted(self: NetGuard, url: str) -> Any:
        seen.append(url)
        return real(self, url)

    monkeypatch.setattr(NetGuard, "vet", counted)
    return seen


def settings_for(fake: FakeOllama, web_url: str, host: str, data: Path, **library: Any) -> Any:
    overrides: dict[str, Any] = {
        "system": {"data_dir": str(data)},
        "web": {
            "search": {"provider": "searxng", "searxng_url": web_url, "timeout_s": 5},
            "fetch": {"allow_hosts": [host], "timeout_s": 5},
        },
        "research": {"retry_backoff_s": 0.05, "max_rounds": 1},
    }
    overrides["system"]["ollama_host"] = fake.url
    overrides["generator"] = {"backend": "ollama"}
    overrides["memory"] = {"enabled": False}
    overrides["critic"] = {"enabled": False}
    overrides["library"] = library
    return load_settings(overrides=overrides)


def run(settings: Any, **options: Any) -> dict[str, Any]:
    research = Research(settings, backend="ollama")
    try:
        return dict(research.run(QUESTION, **options))
    finally:
        research.close()


def cited_urls(payload: dict[str, Any]) -> set[str]:
    """The pages a report cites that its run read (a result cited as its snippet alone was
    never read, so never kept)."""
    body = payload["report"].split("## References")[0]
    return {s["url"] for s in payload["sources"] if f"[{s['n']}]" in body and s["kind"] == "page"}


def test_a_run_from_the_library_cites_what_was_read_with_no_request(
    web: LoopbackWeb, tmp_path: Path, vets: list[str]
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, web.url, web.host, tmp_path / "data")
        first = run(settings)
        read = {web.page_url(name) for name in web.pages_served()}
        requests, vetted = len(web.hits), len(vets)
        assert read and web.searches() and vetted >= len(read)
        library = ReadingLibrary.shared(settings)
        entries = library.entries("local")
        assert {e["url"] for e in entries} == read  # every page read, kept
        run_id = first["run_id"]
        assert all(e["readings"][0]["run_id"] == run_id for e in entries)
        assert sum(e["cited"] for e in entries) == len(cited_urls(first))
        assert not any("kept_id" in s for s in first["sources"])  # read from the web

        second = run(settings, sources="library")  # the web and its search still up
    # not one request reached the web server (search or page), not one URL was vetted
    assert len(web.hits) == requests and len(vets) == vetted
    assert second["status"] == "done"
    assert cited_urls(second) == cited_urls(first)  # the same sources, from their kept copies
    assert all("(from your library, read " in s["title"] for s in second["sources"])
    again = {e["url"]: e for e in ReadingLibrary.shared(settings).entries("local")}
    for url in cited_urls(second):
        runs = [r["run_id"] for r in again[url]["readings"]]
        assert runs == [first["run_id"], second["run_id"]]
    pages = [s for s in second["sources"] if s["kind"] == "page"]
    assert pages
    for source in pages:  # each names its kept copy
        kept = again[source["url"]]["id"]
        assert source["kept_id"] == kept and source["kept_url"] == f"/library/{kept}"
        assert f"kept copy `{kept}`" in second["report"].split("## References")[1]


def test_a_run_kept_off_keeps_nothing_and_says_so(web: LoopbackWeb, tmp_path: Path) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, web.url, web.host, tmp_path / "data")
        research = Research(settings, backend="ollama")
        try:  # paused for its plan, then answered: it goes on keeping nothing
            items = list(research.stream(QUESTION, review=True, keep="off"))
            said, run_id = items[0][1]["library"], items[0][1]["run_id"]
            assert items[-1][1]["status"] == "awaiting_input"
            assert research.library.run_keep == {}  # its stream ended: kept in its state
            payload = collect_research(research.input(run_id, {"approve": True}))
        finally:
            research.close()
        library = ReadingLibrary.shared(settings)
        assert payload["status"] == "done" and web.pages_served() and payload["sources"]
        assert library.entries("local") == [] and library.run_keep == {}
        assert said["keep"] == "off" and said["note"].startswith("Keeping nothing")
        off = settings_for(fake, web.url, web.host, tmp_path / "off", keep="off")
        run(off)
        assert ReadingLibrary.shared(off).entries("local") == []


def test_a_refused_page_is_not_kept(web: LoopbackWeb, tmp_path: Path) -> None:
    top = [p.name for p in web.rank(QUESTION)[:2]]
    web.page_status = dict.fromkeys(top, 404)
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, web.url, web.host, tmp_path / "data")
        run(settings)
    kept = {e["url"] for e in ReadingLibrary.shared(settings).entries("local")}
    assert kept and not kept & {web.page_url(n) for n in top}


def test_a_page_read_by_three_runs_is_one_entry_with_three_readings(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, web.url, web.host, tmp_path / "data")
        runs = [run(settings)["run_id"] for _ in range(3)]
    entries = ReadingLibrary.shared(settings).entries("local")
    read = {web.page_url(name) for name in web.pages_served()}
    assert len(entries) == len(read)  # each page once, however often it was read
    assert all([r["run_id"] for r in e["readings"]] == runs for e in entries)


def test_both_searches_the_library_first_and_the_web_for_what_it_lacks(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, web.url, web.host, tmp_path / "data")
        run(settings)
        kept = {e["url"] for e in ReadingLibrary.shared(settings).entries("local")}
        searches, served = len(web.searches()), len(web.pages_served())
        payload = run(settings, sources="both")
    assert len(web.searches()) > searches  # the library had fewer hits than asked for
    titles = {s["url"]: s["title"] for s in payload["sources"]}
    mine = {u for u, t in titles.items() if "(from your library, read " in t}
    assert mine and mine <= kept  # the library's hits first, each marked
    assert all("(from the web)" in t for u, t in titles.items() if u not in mine)
    again = web.pages_served()[served:]
    assert not {web.page_url(n) for n in again} & kept  # kept pages read from their copies
