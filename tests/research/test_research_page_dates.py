"""A page read within a run's window whose own metadata dates it outside is left out, through
the real parts: a SearXNG stand-in and the pages on one loopback server (real httpx, the
real extraction worker), the real SQLite checkpointer and ChatOllama against the test kit's
Ollama-protocol server.

The search's hits are undated (a web engine's are), so the scope keeps them all; the pages
say when they were published: one in its Open Graph ``article:published_time`` (2019: before
the run's ``--since 2024-01-01``), one in JSON-LD ``datePublished`` (2024: inside), one not at
all (kept: nothing dates it outside). The 2019 page's text reaches no model request, its read
is recorded as left out of scope (the call's error, the ``tool.result`` event), and the
others are read as usual. Without a window the same page is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local2.documents import published_date
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.research.test_research_sources import model_text, run, settings_for
from tests.scholarly_stub import Reply, Stub, stub

QUESTION = "How do tide tables predict the tides?"
OLD_WORDS = "Quentharian harmonic ledger"  # only in the 2019 page's text
TOPIC = (
    "Tide tables predict the tides from harmonic constituents fitted to years of gauge "
    "records; each constituent is a cosine with its own period, amplitude and phase."
)


def page(title: str, body: str, head: str = "") -> bytes:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><article><h1>{title}</h1>"
        f"<p>{body}</p><p>{TOPIC}</p></article></body></html>"
    ).encode()


PAGES = {
    "/old": page(
        "Tide tables, the old way",
        f"The {OLD_WORDS} sums the constituents by hand for each port and each day.",
        '<meta property="article:published_time" content="2019-04-02T09:00:00Z">',
    ),
    "/new": page(
        "Tide tables today",
        "Modern tide tables are computed by software from the same constituents.",
        '<script type="application/ld+json">'
        + json.dumps(
            {
                "@context": "https://schema.org",
                "@graph": [{"@type": "Article", "datePublished": "2024-06-11"}],
            }
        )
        + "</script>",
    ),
    "/undated": page(
        "How tide prediction works",
        "Harmonic analysis separates the tide into constituents driven by the moon and sun.",
    ),
}


def read_all(plan_question: str) -> dict[str, Any]:
    """Search, read the top three results, write."""
    return {
        "goal": plan_question,
        "steps": [
            {
                "id": "s1",
                "description": "Search",
                "tool": "web_search",
                "args": {"query": plan_question},
                "requires": [],
            },
            {
                "id": "s2",
                "description": "Read",
                "tool": "web_fetch",
                "args": {"from_step": "s1", "top": 3},
                "requires": ["s1"],
            },
            {"id": "s3", "description": "Write", "tool": "compose", "args": {}, "requires": ["s2"]},
        ],
    }


def served() -> Any:
    """The pages and a SearXNG answering them as undated hits, on one loopback server."""
    routes = {p: [Reply(body, ctype="text/html; charset=utf-8")] for p, body in PAGES.items()}
    routes["/search"] = [Reply(b"{}")]
    return stub(routes)


def hits_of(server: Stub) -> bytes:
    snippets = {
        "/old": "How tide tables were made by hand.",
        "/new": "How tide tables are computed now.",
        "/undated": "How tide prediction works.",
    }
    return json.dumps(
        {
            "results": [
                {"title": f"Tides {p}", "url": server.url(p), "content": s}
                for p, s in snippets.items()
            ]
        }
    ).encode()


def research(server: Stub, tmp_path: Path, scope: dict[str, Any] | None) -> tuple[Any, str]:
    server.replies["/search"] = [Reply(hits_of(server))]
    with FakeOllama(ResearchBrain(plans=[read_all(QUESTION)])) as fake:
        settings = settings_for(fake, server, tmp_path / "data")
        settings.web.search.provider = "searxng"
        settings.web.search.searxng_url = server.url("")
        settings.web.fetch.timeout_s = 30  # the extraction worker starts on a busy machine
        payload = run(settings, sources="web", scope=scope)
        return payload, model_text(fake)


def fetch_calls(payload: dict[str, Any]) -> dict[str, str | None]:
    """Each page the read step asked for, by path, with its call's error."""
    step = next(s for s in payload["steps"] if s["tool"] == "web_fetch")
    return {c["args"]["url"].rsplit("/", 1)[-1]: c["error"] for c in step["calls"]}


def test_a_page_dated_before_since_by_its_own_metadata_never_reaches_the_model(
    tmp_path: Path,
) -> None:
    with served() as server:
        payload, asked_model = research(server, tmp_path, {"since": "2024-01-01"})
        fetched = [p for p in server.paths() if p in PAGES]
    assert payload["status"] == "done", payload.get("no_sources")
    assert set(fetched) == set(PAGES)  # every page was read...
    calls = fetch_calls(payload)
    assert OLD_WORDS not in asked_model, calls  # ...and the 2019 one given to no model,
    assert "made by hand" not in asked_model, calls  # nor its hit, once the page dated it
    assert calls["new"] is None and calls["undated"] is None
    assert calls["old"] is not None and calls["old"].startswith("out of scope: ")
    assert "published 2019-04-02, before 2024-01-01" in calls["old"]
    results = [e for e in payload["event_log"] if e["subject"] == "tool.result.web_fetch"]
    assert any("out of scope" in str(e.get("error")) for e in results), results
    read = {s["url"].rsplit("/", 1)[-1] for s in payload["sources"] if s["kind"] == "page"}
    assert read == {"new", "undated"}
    assert all(OLD_WORDS not in str(s) for s in payload["sources"])
    assert "_Scope: Sources published on or after 2024-01-01." in payload["report"]


def test_without_a_window_the_same_page_is_read(tmp_path: Path) -> None:
    with served() as server:
        payload, asked_model = research(server, tmp_path, None)
    assert all(error is None for error in fetch_calls(payload).values())
    assert OLD_WORDS in asked_model


def test_the_published_date_is_read_from_metadata_only() -> None:
    assert published_date(PAGES["/old"].decode()) == "2019-04-02"
    assert published_date(PAGES["/new"].decode()) == "2024-06-11"
    assert published_date(PAGES["/undated"].decode()) is None
    highwire = '<meta name="citation_publication_date" content="2018/11/05">'
    modified_first = (
        '<meta property="article:modified_time" content="2025-01-01">'
        '<meta name="dc.date" content="2017">'
    )
    assert published_date(f"<html><head>{highwire}</head><body>x</body></html>") == "2018-11-05"
    assert published_date(f"<html><head>{modified_first}</head><body>x</body></html>") == "2017"
    # a date the text mentions is not the page's: a page about 1953 was not published then
    text_only = "<html><body><p>Published on 1953-04-25 in Nature.</p></body></html>"
    assert published_date(text_only) is None
    assert published_date('<meta itemprop="datePublished" content="2020-02-30">') is None
