"""A research run told its sources by name and scoped in time, through the real parts: the
arXiv and PubMed APIs' recorded answers served on 127.0.0.1 to the real httpx client, the
papers' open-access PDF on the same loopback server, the real SQLite checkpointer and
ChatOllama against the test kit's Ollama-protocol server.

``--sources arxiv,pubmed --since 2024-01-01``: the window is pushed into both APIs' filters
(asserted on the requests the stub received), a planted 2019 paper the stub sends anyway
never reaches any model request, the report cites in-scope papers with authors, date and
DOI, reads the open-access PDF by page, marks the retracted paper and says its scope.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local2.errors import InvalidInput
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.kit.scholarly_stub import Reply, Stub, recorded, stub
from tests.research.sources_helpers import (
    PLANTED,
    QUESTION,
    model_text,
    run,
    scholarly_apis,
    settings_for,
)


def test_arxiv_and_pubmed_since_2024_cite_in_scope_papers_by_page_with_their_record(
    apis: Stub, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, apis, tmp_path / "data")
        payload = run(settings, sources="arxiv,pubmed", scope={"since": "2024-01-01"})
        asked_model = model_text(fake)
    assert payload["status"] == "done", payload.get("no_sources")
    assert payload["looks_at"] == ["arxiv", "pubmed"]
    assert payload["scope"] is not None and payload["scope"]["since"] == "2024-01-01"
    # the window went into both APIs' own filters
    query = apis.asked("/api/query")[0]["search_query"][0]
    assert "submittedDate:[202401010000 TO " in query
    esearch = apis.asked("/entrez/eutils/esearch.fcgi")[0]
    assert esearch["mindate"] == ["2024/01/01"] and esearch["datetype"] == ["pdat"]
    # the planted 2019 paper reached no model request, nor the ledger
    assert PLANTED not in asked_model
    assert all(PLANTED not in s["title"] for s in payload["sources"])
    report = payload["report"]
    body, references = report.split("## References")
    assert "_Scope: Sources published on or after 2024-01-01." in report
    # the open-access PDF was read page by page, and a page of it is cited
    pages = [s for s in payload["sources"] if "#page=" in s["url"] and s["kind"] == "page"]
    assert pages, payload["sources"]
    assert any(f"[{s['n']}]" in body for s in pages)
    cited_page = next(s for s in pages if f"[{s['n']}]" in body)
    assert cited_page["meta"]["doi"] == "10.1000/sleep.2024.1"  # the paper's record, per page
    assert r"Ada Lovelace, Grace Hopper \(2024-02-14\)" in references
    assert "doi:10.1000/sleep.2024.1" in references
    # every source carries its record, and shows its date or "undated"
    for source in payload["sources"]:
        assert source["meta"]["provider"] in ("arxiv", "pubmed")
        line = next(ln for ln in references.splitlines() if ln.startswith(f"[{source['n']}]"))
        assert (source["meta"]["published"] or "undated") in line
    # PubMed's retracted paper: marked wherever it is listed
    retracted = [s for s in payload["sources"] if s["meta"]["retracted"]]
    assert retracted and retracted[0]["meta"]["pmid"] == "38000002"
    n = retracted[0]["n"]
    line = next(ln for ln in references.splitlines() if ln.startswith(f"[{n}]"))
    assert "**RETRACTED**" in line
    if f"[{n}]" in body:  # and where it is cited
        assert f"source [{n}] is RETRACTED" in report
        assert f"[{n}] _(RETRACTED)_" in body


def test_a_failing_source_is_left_out_and_the_run_goes_on(apis: Stub, tmp_path: Path) -> None:
    apis.replies["/entrez/eutils/esearch.fcgi"] = [Reply(b"busy", status=503)]
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, apis, tmp_path / "data")
        settings.scholarly.retry_backoff_s = 0.0
        payload = run(settings, sources=["arxiv", "pubmed"])
    assert payload["status"] == "done"
    assert len(apis.asked("/entrez/eutils/esearch.fcgi")) == 2  # asked once more, then left
    assert {s["meta"]["provider"] for s in payload["sources"]} == {"arxiv"}
    said = [
        n
        for e in payload["event_log"]
        if e["subject"].startswith("tool.") and e.get("notices")
        for n in e["notices"]
    ]
    assert any("PubMed" in n and "goes on without it" in n for n in said), said


def test_the_settings_default_and_refusals(apis: Stub, tmp_path: Path) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, apis, tmp_path / "data", sources=["arxiv"])
        payload = run(settings)  # no sources given: research.sources
        assert payload["looks_at"] == ["arxiv"]
        with pytest.raises(InvalidInput, match="unknown source 'scholar'") as refused:
            run(settings, sources="web,scholar")
        assert "arxiv" in (refused.value.fix or "")
        with pytest.raises(InvalidInput, match="after --until"):
            run(settings, scope={"since": "2024-05-01", "until": "2024-01-01"})
        with pytest.raises(InvalidInput, match="not a date"):
            run(settings, scope={"since": "yesterday-ish"})


def test_the_plan_may_send_each_search_to_one_source(apis: Stub, tmp_path: Path) -> None:
    """A plan names the source of each search step (search_arxiv, search_pubmed): each goes
    to that source alone, and the plan is offered them."""
    plan = {
        "goal": QUESTION,
        "steps": [
            {
                "id": "s1",
                "description": "Preprints",
                "tool": "search_arxiv",
                "args": {"query": "slow-wave sleep memory"},
                "requires": [],
            },
            {
                "id": "s2",
                "description": "Papers",
                "tool": "search_pubmed",
                "args": {"query": "sleep declarative memory"},
                "requires": [],
            },
            {
                "id": "s3",
                "description": "Write",
                "tool": "compose",
                "args": {},
                "requires": ["s1", "s2"],
            },
        ],
    }
    brain = ResearchBrain(plans=[plan])
    with FakeOllama(brain) as fake:
        settings = settings_for(fake, apis, tmp_path / "data")
        payload = run(settings, sources="arxiv,pubmed")
        planned = "\n".join(str(r.get("format")) for r in fake.chat_requests if r.get("format"))
    assert payload["status"] == "done"
    assert "search_arxiv" in planned and "search_pubmed" in planned  # offered to the planner
    tools = {s["id"]: s["tool"] for s in payload["steps"]}
    assert tools == {"s1": "search_arxiv", "s2": "search_pubmed", "s3": "compose"}
    assert apis.asked("/api/query")[0]["search_query"][0].startswith("all:slow")
    assert apis.asked("/entrez/eutils/esearch.fcgi")[0]["term"] == ["sleep declarative memory"]
    assert len(apis.asked("/api/query")) == 1  # each searched once: by its own step
    by_step = {s["found_by"]: s["meta"]["provider"] for s in payload["sources"]}
    assert by_step == {"s1": "arxiv", "s2": "pubmed"}


def test_the_scope_goes_into_the_web_engines_own_filters_and_is_applied_to_their_hits(
    tmp_path: Path,
) -> None:
    """SearXNG is told the window (time_range) and the sites (site: operators); a hit it
    sends from a site left out never reaches the model; web hits are undated, kept, counted."""
    results = {
        "results": [
            {"title": "Sleep in adults", "url": "https://sleep.example/a", "content": SLEEPY},
            {"title": "Spam", "url": "https://spam.example/x", "content": f"{PLANTED} sleep"},
            {"title": "Elsewhere", "url": "https://other.org/y", "content": f"{PLANTED} memory"},
        ]
    }
    search_only = {  # nothing is read: the hits are all this test is about
        "goal": QUESTION,
        "steps": [
            {
                "id": "s1",
                "description": "Search",
                "tool": "web_search",
                "args": {"query": QUESTION},
                "requires": [],
            },
            {"id": "s2", "description": "Write", "tool": "compose", "args": {}, "requires": ["s1"]},
        ],
    }
    with (
        stub({"/search": [Reply(json.dumps(results).encode())]}) as engine,
        FakeOllama(ResearchBrain(plans=[search_only])) as fake,
    ):
        settings = settings_for(fake, engine, tmp_path / "data")
        settings.web.search.provider = "searxng"
        settings.web.search.searxng_url = engine.url("")
        scope = {
            "since": "past week",
            "domains": "sleep.example",
            "exclude_domains": ["spam.example"],
        }
        payload = run(settings, sources="web", scope=scope)
        asked_model = model_text(fake)
    asked = engine.asked("/search")[0]
    assert asked["time_range"] == ["week"]
    assert asked["q"][0].endswith("site:sleep.example -site:spam.example")
    assert PLANTED not in asked_model
    assert [s["url"] for s in payload["sources"]] == ["https://sleep.example/a"]
    assert payload["sources"][0]["meta"]["published"] is None  # a web hit: undated, kept
    assert "1 of the sources are undated" in payload["report"]
    assert "only from sleep.example; never from spam.example" in payload["report"]


SLEEPY = "Slow-wave sleep consolidates declarative memory in adults."


def test_each_engine_reads_the_window_its_own_way() -> None:
    from datetime import date

    from local2.tools._scholarly import parse_scope
    from local2.tools._search import brave_params, ddgs_params, searxng_params, tavily_params

    today = date(2026, 12, 8)
    month = parse_scope("past month", today=today)
    assert searxng_params(month) in ({"time_range": "month"},)
    assert ddgs_params(month) == {"timelimit": "m"}
    old = parse_scope("2020-01-01", "2021-06", "nature.com", "spam.example", today=today)
    assert searxng_params(old) == {} and ddgs_params(old) == {}  # no relative window ends then
    assert brave_params(old) == {"freshness": "2020-01-01to2021-06-30"}
    assert tavily_params(old) == {
        "start_date": "2020-01-01",
        "end_date": "2021-06-30",
        "include_domains": ["nature.com"],
        "exclude_domains": ["spam.example"],
    }
    assert tavily_params(parse_scope()) == {} and brave_params(parse_scope()) == {}


def test_with_crossref_a_retracted_preprint_found_on_arxiv_is_marked(tmp_path: Path) -> None:
    """arXiv publishes no retraction; with crossref among the sources, its DOI is looked up
    and Crossref's retraction data (updated-by: retraction) marks it in the report."""
    crossref = {
        "/works": [Reply(recorded("crossref_works.json"))],
        "/works/10.1000/sleep.2024.1": [Reply(recorded("crossref_work.json"))],
    }
    with scholarly_apis(crossref) as apis, FakeOllama(ResearchBrain()) as fake:
        settings = settings_for(fake, apis, tmp_path / "data")
        settings.scholarly.crossref.base_url = apis.url("")
        payload = run(settings, sources="arxiv,crossref")
        looked_up = apis.asked("/works/10.1000/sleep.2024.1")
    assert looked_up  # the preprint's DOI
    preprint = [s for s in payload["sources"] if (s["meta"]["arxiv_id"] or "") == "2402.04321"]
    assert preprint and all(s["meta"]["retracted"] for s in preprint)
    references = payload["report"].split("## References")[1]
    line = next(ln for ln in references.splitlines() if ln.startswith(f"[{preprint[0]['n']}]"))
    assert "**RETRACTED**" in line
