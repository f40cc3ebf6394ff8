"""Each scholarly provider against answers recorded in the shape its API documents
(``tests/fixtures/scholarly/``), served on loopback through its base-URL setting: the
fields a citation needs mapped, the scope sent as the API expects (asserted on the request
the stub received) and applied to the hits, paging, empty answers, the API's pauses kept
(on a recording clock), and its own ways of failing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from local2.errors import InvalidInput, ToolError
from local2.tools._scholarly.base import PagedProvider
from local2.tools._scholarly.crossref import CrossrefProvider
from local2.tools._scholarly.hit import ScholarlyHit
from local2.tools._scholarly.named import KNOWN_SOURCES, parse_sources, scholarly_provider
from local2.tools._scholarly.scope import parse_scope
from local2.tools._scholarly.settings import (
    ArxivSettings,
    CrossrefSettings,
    OpenAlexSettings,
    PubmedSettings,
    ScholarlySettings,
    SemanticScholarSettings,
    WikipediaSettings,
)
from tests.kit.scholarly_stub import FakeClock, Reply, Stub, recorded, stub

KEYS = ("NCBI_API_KEY", "SEMANTIC_SCHOLAR_API_KEY", "OPENALEX_API_KEY", "CROSSREF_PLUS_API_TOKEN")
ATOM = "application/atom+xml; charset=UTF-8"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    yield


def provider(name: str, clock: FakeClock, **api: Any) -> PagedProvider:
    settings = ScholarlySettings.model_validate({name: api})
    return scholarly_provider(name, settings, clock=clock)


def one(asked: list[dict[str, list[str]]], index: int = 0) -> dict[str, str]:
    return {k: v[0] for k, v in asked[index].items()}


# -- arXiv ---------------------------------------------------------------------------------


def arxiv(server: Stub, clock: FakeClock, **more: Any) -> PagedProvider:
    return provider("arxiv", clock, base_url=server.url("/api/query"), page_size=2, **more)


def test_arxiv_pages_its_atom_feed_within_its_pause_and_pushes_the_window() -> None:
    clock = FakeClock()
    pages = [Reply(recorded("arxiv_page1.xml"), ctype=ATOM), Reply(recorded("arxiv_page2.xml"))]
    scope = parse_scope("2024-01-01", "2024-12-31")
    with stub({"/api/query": pages}) as server:
        found = arxiv(server, clock).find("sparse attention for clinical notes", 5, scope)
        asked = [one(server.asked("/api/query"), i) for i in range(2)]
    assert [(a["start"], a["max_results"]) for a in asked] == [("0", "2"), ("2", "2")]
    assert asked[0]["search_query"] == (
        "(all:sparse OR all:attention OR all:clinical OR all:notes) "
        "AND submittedDate:[202401010000 TO 202412312359]"
    )
    assert clock.sleeps == [3.0]  # arXiv's terms: three seconds between calls
    assert found.pushed.time and found.total == 3
    assert [h.arxiv_id for h in found.hits] == ["2403.01234", "2405.00007"]
    # the stub ignores the window: the scope drops what it sends from outside it anyway
    assert [(h.url, why) for h, why in found.dropped] == [
        ("https://arxiv.org/abs/hep-th/9901001", "published 1999-01-01, before 2024-01-01")
    ]
    paper = found.hits[0]
    assert paper.title == "Sparse Attention for Long Clinical Notes"
    assert paper.snippet.startswith("We show that sparse attention reads clinical notes")
    assert paper.authors == ("Ada Lovelace", "Grace Hopper")
    assert paper.published == "2024-03-02"  # the first version's, not the last update's
    assert (paper.kind, paper.doi, paper.venue) == (
        "preprint",
        "10.1000/jml.2024.77",
        "Journal of Machine Learning 12 (2024) 101-112",
    )
    assert paper.pdf_url == "https://arxiv.org/pdf/2403.01234v2" and paper.open_access
    assert paper.peer_reviewed is None  # a journal version exists; this copy is the preprint
    assert found.hits[1].venue == "arXiv" and found.hits[1].peer_reviewed is False
    assert "https://doi.org/10.1000/jml.2024.77" in paper.urls()


def test_arxiv_says_its_error_entry_and_an_empty_feed_is_no_hits() -> None:
    error = Reply(recorded("arxiv_error.xml"), ctype=ATOM)
    with stub({"/api/query": [error]}) as server, pytest.raises(ToolError) as failed:
        arxiv(server, FakeClock()).find("1234.12345", 5)
    assert "incorrect id format for 1234.12345" in failed.value.message
    empty = recorded("arxiv_page2.xml").split(b"<entry>")[0] + b"</feed>"
    empty = empty.replace(b">3</opensearch:totalResults>", b">0</opensearch:totalResults>")
    with stub({"/api/query": [Reply(empty, ctype=ATOM)]}) as server:
        found = arxiv(server, FakeClock()).find("nothing like this", 5)
        assert len(server.asked("/api/query")) == 1
    assert found.hits == [] and found.total == 0 and not found.pushed.time


# -- PubMed --------------------------------------------------------------------------------

EUTILS = "/entrez/eutils"


def pubmed_stub(esearch: bytes | None = None) -> Any:
    return stub(
        {
            f"{EUTILS}/esearch.fcgi": [Reply(esearch or recorded("pubmed_esearch.json"))],
            f"{EUTILS}/efetch.fcgi": [Reply(recorded("pubmed_efetch.xml"), ctype="text/xml")],
        }
    )


def test_pubmed_searches_then_fetches_the_records_within_the_rate_without_a_key() -> None:
    clock = FakeClock()
    with pubmed_stub() as server:
        pubmed = provider("pubmed", clock, base_url=server.url(EUTILS), email="me@example.org")
        found = pubmed.find("sleep memory", 10, parse_scope("2024", "2024"))
        search = one(server.asked(f"{EUTILS}/esearch.fcgi"))
        fetch = one(server.asked(f"{EUTILS}/efetch.fcgi"))
    assert {k: search[k] for k in ("db", "term", "retmode", "datetype", "mindate", "maxdate")} == {
        "db": "pubmed",
        "term": "sleep memory",
        "retmode": "json",
        "datetype": "pdat",
        "mindate": "2024/01/01",
        "maxdate": "2024/12/31",
    }
    assert (search["tool"], search["email"]) == ("local2", "me@example.org")
    assert "api_key" not in search and "api_key" not in fetch
    assert fetch["id"] == "38000002,38000001" and fetch["retmode"] == "xml"
    assert clock.sleeps == [round(1 / 3, 6)]  # 3 requests a second without a key
    assert [h.pmid for h in found.hits] == ["38000002", "38000001"]  # esearch's order
    retracted, kept = found.hits
    assert retracted.retracted is True and retracted.published == "2024"  # "2024 Mar-Apr"
    assert (retracted.title, retracted.venue) == (
        "Retracted: Napping doubles recall.",
        "Memory & Cognition",
    )
    assert kept.retracted is False and kept.published == "2024-03-05"
    assert kept.authors == ("Marie Curie", "Sleep Study Group")
    assert (kept.doi, kept.pmcid, kept.open_access) == ("10.1111/jsr.2024.001", "PMC10900001", True)
    assert (
        kept.snippet
        == "Sleep is thought to consolidate memory. Recall rose by 12% after a night's sleep."
    )
    assert kept.url == "https://pubmed.ncbi.nlm.nih.gov/38000001/"
    assert "https://pmc.ncbi.nlm.nih.gov/articles/PMC10900001/" in kept.urls()


def test_pubmed_with_a_key_sends_it_asks_faster_and_never_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-key-42")
    clock = FakeClock()
    with pubmed_stub() as server:
        provider("pubmed", clock, base_url=server.url(EUTILS)).find("sleep memory", 10)
        assert one(server.asked(f"{EUTILS}/esearch.fcgi"))["api_key"] == "ncbi-key-42"
    assert clock.sleeps == [0.1]  # 10 a second with a key
    refusal = json.dumps({"error": "API key invalid: ncbi-key-42"}).encode()
    with pubmed_stub(refusal) as server, pytest.raises(ToolError) as failed:
        provider("pubmed", FakeClock(), base_url=server.url(EUTILS)).find("sleep", 10)
    assert "API key invalid: ***" in failed.value.message
    assert "ncbi-key-42" not in failed.value.message + json.dumps(failed.value.data)


def test_pubmed_with_no_match_asks_for_no_records() -> None:
    none = json.dumps({"esearchresult": {"count": "0", "retmax": "0", "idlist": []}}).encode()
    with pubmed_stub(none) as server:
        found = provider("pubmed", FakeClock(), base_url=server.url(EUTILS)).find("zzz", 10)
        assert server.asked(f"{EUTILS}/efetch.fcgi") == []
    assert found.hits == [] and found.total == 0


# -- Semantic Scholar ----------------------------------------------------------------------

S2 = "/graph/v1/paper/search"


def test_semantic_scholar_backs_off_a_429_and_maps_its_papers() -> None:
    clock = FakeClock()
    busy = Reply(b'{"message": "Too Many Requests"}', 429, headers={"Retry-After": "4"})
    last = Reply(json.dumps({"total": 3, "offset": 2, "data": []}).encode())
    with stub({S2: [busy, Reply(recorded("s2_search.json")), last]}) as server:
        s2 = provider("semantic_scholar", clock, base_url=server.url("/graph/v1"), page_size=2)
        found = s2.find("literature graph", 3, parse_scope("2016-01-01"))
        asked = [one(server.asked(S2), i) for i in range(3)]
    assert [a["offset"] for a in asked] == ["0", "0", "2"]  # the 429, its retry, page two
    assert asked[0]["publicationDateOrYear"] == "2016-01-01:"
    assert "externalIds" in asked[0]["fields"] and "openAccessPdf" in asked[0]["fields"]
    assert 4.0 in clock.sleeps
    assert found.notices == ["Semantic Scholar answered 429; asked again after 4 s"]
    paper, undated = found.hits
    assert (paper.doi, paper.arxiv_id, paper.pmid, paper.pmcid) == (
        "10.18653/v1/N18-3011",
        "1805.02262",
        "31000001",
        "PMC6500001",
    )
    assert paper.pdf_url == "https://www.aclweb.org/anthology/N18-3011.pdf"
    assert (paper.citations, paper.published, paper.kind) == (453, "2018-06-01", "paper")
    assert paper.authors == ("Waleed Ammar", "Dirk Groeneveld")
    assert undated.published is None and found.undated == 1  # kept: nothing dates it out
    assert (undated.kind, undated.peer_reviewed, undated.citations) == ("preprint", False, 0)
    assert undated.snippet == "" and undated.open_access is False


def test_semantic_scholar_sends_its_optional_key_as_a_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEMANTIC_SCHOLAR_API_KEY", "s2-key")
    with stub({S2: [Reply(json.dumps({"total": 0, "offset": 0, "data": []}).encode())]}) as server:
        found = provider("semantic_scholar", FakeClock(), base_url=server.url("/graph/v1")).find(
            "graphs", 5
        )
        assert server.headers(S2)[0]["x-api-key"] == "s2-key"
        assert "s2-key" not in server.paths()[0]
    assert found.hits == []


# -- OpenAlex ------------------------------------------------------------------------------


def test_openalex_without_a_key_is_left_out_with_a_notice_and_asks_nothing() -> None:
    with stub({"/works": [Reply(recorded("openalex_works.json"))]}) as server:
        openalex = provider("openalex", FakeClock(), base_url=server.url(""))
        notice = openalex.notice()
        with pytest.raises(ToolError) as failed:
            openalex.find("open access", 5)
        assert server.paths() == []
    assert notice is not None and "OpenAlex is left out" in notice
    assert "OPENALEX_API_KEY" in notice and "February 2026" in notice
    assert failed.value.data["cause"] == "unavailable"
    assert "leave openalex out of the run's sources" in failed.value.fix


def test_openalex_with_a_key_maps_its_works_and_pushes_the_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENALEX_API_KEY", "oa-key")
    with stub({"/works": [Reply(recorded("openalex_works.json"))]}) as server:
        openalex = provider("openalex", FakeClock(), base_url=server.url(""))
        assert openalex.notice() is None
        found = openalex.find("open access", 5, parse_scope("2018", "2023"))
        asked = one(server.asked("/works"))
    assert asked == {
        "search": "open access",
        "per_page": "5",
        "page": "1",
        "api_key": "oa-key",
        "filter": "from_publication_date:2018-01-01,to_publication_date:2023-12-31",
    }
    study, withdrawn = found.hits
    assert study.snippet == "Despite growing interest in Open Access"  # its inverted index
    assert (study.doi, study.pmid, study.pmcid) == ("10.7717/peerj.4375", "29456894", "PMC5815332")
    assert (study.venue, study.published, study.citations) == ("PeerJ", "2018-02-13", 1092)
    assert study.pdf_url == "https://peerj.com/articles/4375.pdf" and study.retracted is False
    assert study.authors == ("Heather Piwowar", "Jason Priem")
    assert (withdrawn.kind, withdrawn.retracted, withdrawn.published) == ("preprint", True, "2023")
    assert withdrawn.url.startswith("https://www.biorxiv.org/")


# -- Crossref ------------------------------------------------------------------------------

LIMITS = {"x-rate-limit-limit": "4", "x-rate-limit-interval": "1s"}
DOI = "10.1000/jml.2024.77"


def test_crossref_marks_retractions_and_paces_itself_by_its_headers() -> None:
    clock = FakeClock()
    replies = {
        "/works": [Reply(recorded("crossref_works.json"), headers=LIMITS)],
        f"/works/{DOI}": [Reply(recorded("crossref_work.json"), headers=LIMITS)],
    }
    with stub(replies) as server:
        crossref = provider("crossref", clock, base_url=server.url(""), mailto="me@example.org")
        assert isinstance(crossref, CrossrefProvider)
        found = crossref.find("hydroxychloroquine", 2, parse_scope("2020-01-01"))
        asked = one(server.asked("/works"))
        arxiv_copy = ScholarlyHit(title="t", url="https://arxiv.org/abs/2403.01234", snippet="")
        unmarked = ScholarlyHit(
            title="Sparse", url="https://arxiv.org/abs/2403.01234", snippet="", doi=DOI
        )
        marked = crossref.mark_retractions([arxiv_copy, unmarked])
        agent = server.headers("/works")[0]["user-agent"]
    assert asked == {
        "query": "hydroxychloroquine",
        "rows": "2",
        "offset": "0",
        "mailto": "me@example.org",
        "filter": "from-pub-date:2020-01-01",
    }
    assert "mailto:me@example.org" in agent  # the polite pool
    assert clock.sleeps == [0.25]  # 4 calls a second, as the first answer's headers said
    lancet, preprint = found.hits
    assert lancet.retracted is True and lancet.venue == "The Lancet"
    assert (lancet.doi, lancet.published) == ("10.1016/s0140-6736(20)31180-6", "2020-05")
    assert lancet.authors == ("Mandeep R Mehra", "Sapan S Desai")
    assert (
        lancet.pdf_url == "https://www.thelancet.com/pdfs/journals/lancet/PIIS0140673620311806.pdf"
    )
    assert lancet.snippet == "Background Hydroxychloroquine or chloroquine, often in combination."
    assert (preprint.kind, preprint.retracted, preprint.published) == (
        "preprint",
        False,
        "2020-04-21",
    )
    assert preprint.venue == "medRxiv"
    assert marked[0].retracted is None  # no DOI: nothing to ask
    assert marked[1].retracted is True  # Retraction Watch's notice, by way of Crossref


def test_crossref_does_not_know_a_doi() -> None:
    with stub({"/works": [Reply(recorded("crossref_works.json"))]}) as server:
        crossref = provider("crossref", FakeClock(), base_url=server.url(""))
        assert isinstance(crossref, CrossrefProvider)
        assert crossref.lookup("10.9999/none") is None  # Crossref's 404
        assert server.paths() == ["/works/10.9999/none"]


# -- Wikipedia -----------------------------------------------------------------------------


def test_wikipedia_searches_in_the_settings_language_and_dates_by_the_last_edit() -> None:
    with stub({"/de/w/api.php": [Reply(recorded("wikipedia_search.json"))]}) as server:
        wikipedia = provider(
            "wikipedia", FakeClock(), base_url=server.url("/{lang}/w/api.php"), language="de"
        )
        found = wikipedia.find("Schlaf", 2, parse_scope(until="2020-12-31"))
        asked = one(server.asked("/de/w/api.php"))
    assert (asked["list"], asked["srsearch"], asked["sroffset"], asked["srlimit"]) == (
        "search",
        "Schlaf",
        "0",
        "2",
    )
    assert not found.pushed.time  # MediaWiki search has no date filter: applied to the hits
    assert [why for _, why in found.dropped] == ["published 2024-05-02, after 2020-12-31"]
    (film,) = found.hits
    assert film.url == "https://de.wikipedia.org/wiki/Schlaf_(Film)"
    assert (film.kind, film.venue, film.published) == (
        "encyclopedia",
        "Wikipedia (de)",
        "2019-01-30",
    )
    assert film.snippet == "ein Film über Schlaf"


def test_wikipedia_says_its_error() -> None:
    error = {"error": {"code": "srsearch-text-disabled", "info": "Full text search is off."}}
    with stub({"/en/w/api.php": [Reply(json.dumps(error).encode())]}) as server:
        wikipedia = provider("wikipedia", FakeClock(), base_url=server.url("/{lang}/w/api.php"))
        with pytest.raises(ToolError) as failed:
            wikipedia.find("sleep", 5)
        assert len(server.asked("/en/w/api.php")) == 2  # asked once more, then said
    assert "srsearch-text-disabled: Full text search is off." in failed.value.message
    assert failed.value.fix


# -- every provider ------------------------------------------------------------------------


def test_a_page_that_fails_after_the_first_keeps_what_was_found() -> None:
    first = Reply(recorded("arxiv_page1.xml"), ctype=ATOM)
    down = Reply(b"", 503, ctype="text/plain")
    with stub({"/api/query": [first, down]}) as server:
        found = arxiv(server, FakeClock()).find("sparse attention", 5)
    assert len(found.hits) == 2
    assert found.notices[-1].startswith("arXiv: stopped paging after 2 hits: search failed: 503")


def test_an_empty_query_is_refused_before_anything_is_asked() -> None:
    with stub({"/api/query": [Reply(b"")]}) as server:
        with pytest.raises(ToolError, match="the query is empty") as failed:
            arxiv(server, FakeClock()).find("   ", 5)
        assert server.paths() == []
    assert failed.value.fix


def test_settings_reach_every_provider() -> None:
    settings = ScholarlySettings(
        arxiv=ArxivSettings(base_url="http://127.0.0.1:1/a", timeout_s=3, max_bytes=4096),
        pubmed=PubmedSettings(base_url="http://127.0.0.1:1/p"),
        semantic_scholar=SemanticScholarSettings(base_url="http://127.0.0.1:1/s"),
        openalex=OpenAlexSettings(base_url="http://127.0.0.1:1/o"),
        crossref=CrossrefSettings(base_url="http://127.0.0.1:1/c"),
        wikipedia=WikipediaSettings(base_url="http://127.0.0.1:1/w", language="fr"),
    )
    for name in ("arxiv", "pubmed", "semantic_scholar", "openalex", "crossref", "wikipedia"):
        made = scholarly_provider(name, settings)
        assert made.client.api is getattr(settings, name) and made.name == name
        assert made.client.setting == f"scholarly.{name}"
    assert scholarly_provider("arxiv", settings).client.api.max_bytes == 4096


def test_sources_are_named_and_an_unknown_one_is_refused_with_the_known() -> None:
    assert parse_sources("web, arXiv,pubmed,library,arxiv") == ("web", "arxiv", "pubmed", "library")
    assert parse_sources("both") == ("web", "library")  # today's choice still reads
    assert parse_sources(["s2", "semantic-scholar"]) == ("semantic_scholar",)
    with pytest.raises(InvalidInput) as refused:
        parse_sources("web,scopus")
    assert "unknown source 'scopus'" in refused.value.message
    assert all(name in refused.value.fix for name in KNOWN_SOURCES)
    with pytest.raises(InvalidInput, match="no source named"):
        parse_sources(" , ")
