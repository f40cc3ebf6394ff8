"""Sources, scope and the references leaving the app, on each surface, through the real
parts: ``local2 research`` as a real process, the HTTP API under uvicorn with httpx, and the
MCP server's resources; the arXiv and PubMed APIs' recorded answers served on 127.0.0.1
(``tests/research/test_research_sources.py``), ChatOllama against the Ollama-protocol server.

The exports are read back by the libraries other tools read them with: BibTeX by
bibtexparser, RIS by rispy, CSL-JSON as JSON; the report as PDF by the project's own
document reader, as DOCX by python-docx, as HTML parsed (``tests/tools/test_report_export.py``
reads each more closely)."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bibtexparser
import docx
import httpx
import pytest
import rispy

from local2.config import load_settings
from local2.documents import read_document
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.conftest import local2
from tests.http.test_api import Served
from tests.research.test_research_sources import PLANTED, QUESTION, scholarly_apis, settings_for
from tests.scholarly_stub import Stub


@pytest.fixture
def apis() -> Iterator[Stub]:
    with scholarly_apis() as server:
        yield server


def environment(apis: Stub, tmp_path: Path, ollama: str) -> dict[str, str]:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    host = apis.url("").removeprefix("http://")
    (conf / "web.yaml").write_text(f"fetch:\n  allow_hosts: ['{host}']\n")
    (conf / "memory.yaml").write_text("enabled: false\n")
    (conf / "critic.yaml").write_text("enabled: false\n")
    (conf / "research.yaml").write_text("retry_backoff_s: 0.05\nmax_rounds: 1\n")
    (conf / "scholarly.yaml").write_text(
        f"arxiv:\n  base_url: {apis.url('/api/query')}\n"
        f"pubmed:\n  base_url: {apis.url('/entrez/eutils')}\n  min_interval_s: 0\n"
    )
    return {
        "OLLAMA_HOST": ollama,
        "LOCAL2_HOME": str(tmp_path / "home"),
        "LOCAL2_CONFIG": str(conf),
        "NCBI_API_KEY": "sekret-ncbi-key-123",
    }


def test_the_command_researches_the_sources_named_and_exports_the_references(
    apis: Stub, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        env = environment(apis, tmp_path, fake.url)
        ran = local2(
            "research",
            QUESTION,
            "--sources",
            "arxiv,pubmed",
            "--since",
            "2024-01-01",
            "--json",
            env=env,
        )
    assert ran.returncode == 0, ran.stderr
    assert "Sources: arxiv, pubmed." in ran.stderr
    payload = json.loads(ran.stdout)
    run_id = payload["run_id"]
    assert payload["looks_at"] == ["arxiv", "pubmed"] and payload["status"] == "done"
    assert PLANTED not in ran.stdout
    # the key went to NCBI and nowhere a person reads
    assert apis.asked("/entrez/eutils/esearch.fcgi")[0]["api_key"] == ["sekret-ncbi-key-123"]
    assert "sekret" not in ran.stdout + ran.stderr

    bib = local2("research", "export", run_id, "--format", "bibtex", env=env)
    assert bib.returncode == 0, bib.stderr
    entries = bibtexparser.parse_string(bib.stdout).entries
    assert len(entries) == len(payload["sources"])
    dois = {e.fields_dict["doi"].value for e in entries if "doi" in e.fields_dict}
    assert "10.1000/sleep.2024.1" in dois
    out = tmp_path / "refs.ris"
    ris = local2("research", "export", run_id, "--format", "ris", "--out", str(out), env=env)
    assert ris.returncode == 0, ris.stderr
    read = rispy.loads(out.read_text())
    assert any("Lovelace" in " ".join(r.get("authors", [])) for r in read)
    csl = local2("research", "export", run_id, "--format", "csl-json", env=env)
    assert {i["id"] for i in json.loads(csl.stdout)} == {e.key for e in entries}

    unknown = local2("research", QUESTION, "--sources", "web,scholar", env=env)
    assert unknown.returncode == 2 and "unknown source 'scholar'" in unknown.stderr
    assert "arxiv" in unknown.stderr and "wikipedia" in unknown.stderr
    window = local2("research", QUESTION, "--since", "2024-05", "--until", "2024-01", env=env)
    assert window.returncode == 2 and "is after --until" in window.stderr
    gone = local2("research", "export", "nosuchrun", "--format", "ris", env=env)
    assert gone.returncode == 3, gone.stderr
    fmt = local2("research", "export", run_id, "--format", "odt", env=env)
    assert fmt.returncode == 2 and "unknown export format" in fmt.stderr
    assert "pdf" in fmt.stderr and "docx" in fmt.stderr

    # the report itself: PDF and DOCX to a file, HTML on stdout
    pdf = tmp_path / "report.pdf"
    wrote = local2("research", "export", run_id, "--format", "pdf", "--out", str(pdf), env=env)
    assert wrote.returncode == 0, wrote.stderr
    pages = read_document(pdf.read_bytes(), load_settings().documents, name="r.pdf").pages
    text = " ".join(" ".join(p.text for p in pages).split())
    cited_page = next(s for s in payload["sources"] if s.get("page"))
    assert f"[{cited_page['n']}, p. {cited_page['page']}]" in text
    assert "References" in text and "doi:10.1000/sleep.2024.1" in text
    word = tmp_path / "report.docx"
    wrote = local2("research", "export", run_id, "--format", "word", "--out", str(word), env=env)
    assert wrote.returncode == 0, wrote.stderr
    document = docx.Document(str(word))
    assert [p.text for p in document.paragraphs if p.style.name == "Heading 1"] == [QUESTION]
    html = local2("research", "export", run_id, "--format", "html", env=env)
    assert html.returncode == 0 and html.stdout.startswith("<!DOCTYPE html>")
    assert f'href="#ref-{cited_page["n"]}"' in html.stdout

    # a PDF is never written to a terminal; redirected, it is the file's bytes
    command = [sys.executable, "-m", "local2.cli", "research", "export", run_id, "--format"]
    full_env = {**os.environ, **env}
    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(
            [*command, "pdf"], env=full_env, stdout=follower, stderr=subprocess.PIPE, timeout=120
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert shown.returncode == 2
    refusal = " ".join(shown.stderr.decode().split())
    assert "A PDF file is not for a terminal: nothing was written." in refusal, refusal
    assert "--format pdf --out report.pdf" in refusal
    piped = subprocess.run([*command, "pdf"], env=full_env, capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stdout.startswith(b"%PDF-"), piped.stderr
    again = read_document(piped.stdout, load_settings().documents, name="r.pdf").pages
    assert [p.text for p in again] == [p.text for p in pages]  # the same report, whole


def read_done(response: httpx.Response) -> dict[str, Any]:
    name, payload = "", None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: ") and name == "done":
            payload = json.loads(line.removeprefix("data: "))
    assert payload is not None
    return payload


def test_the_api_takes_sources_and_scope_and_serves_the_references(
    apis: Stub, tmp_path: Path
) -> None:
    from local2.http.app import create_api

    with FakeOllama(ResearchBrain()) as fake:
        agent = Agent(settings_for(fake, apis, tmp_path / "data"), backend="ollama")
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=90) as client:
            body = {
                "question": QUESTION,
                "sources": ["arxiv", "pubmed"],
                "since": "2024-01-01",
                "exclude_domains": ["example.org"],
            }
            with client.stream("POST", "/research", json=body) as response:
                assert response.status_code == 200, response.read()
                payload = read_done(response)
            run_id = payload["run_id"]
            assert payload["scope"]["exclude_domains"] == ["example.org"]
            assert "never from example.org" in payload["report"]
            got = client.get(f"/research/{run_id}/references", params={"format": "bibtex"})
            assert got.status_code == 200
            assert got.headers["content-type"].startswith("application/x-bibtex")
            assert f'filename="{run_id}-references.bib"' in got.headers["content-disposition"]
            keys = [e.key for e in bibtexparser.parse_string(got.text).entries]
            assert len(keys) == len(payload["sources"])
            csl = client.get(f"/research/{run_id}/references", params={"format": "csl"}).json()
            assert sorted(i["id"] for i in csl) == sorted(keys)  # the same keys in each
            assert client.get("/research/nope/references").status_code == 404
            bad = client.get(f"/research/{run_id}/references", params={"format": "odt"})
            assert bad.status_code == 422 and "bibtex" in bad.text
            # the report itself, each with its type and file name
            kinds = {
                "pdf": "application/pdf",
                "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                "html": "text/html; charset=utf-8",
            }
            files = {}
            for fmt, media in kinds.items():
                got = client.get(f"/research/{run_id}/references", params={"format": fmt})
                assert got.status_code == 200 and got.headers["content-type"] == media
                disposition = got.headers["content-disposition"]
                assert disposition == f'attachment; filename="{run_id}-report.{fmt}"'
                files[fmt] = got.content
                # the route name serves the same file
                again = client.get(f"/research/{run_id}/export", params={"format": fmt})
                assert again.status_code == 200 and again.headers["content-type"] == media
                if fmt == "html":  # PDF and DOCX carry their time of making
                    assert again.content == got.content
            settings = load_settings().documents
            pages = read_document(files["pdf"], settings, name="r.pdf").pages
            assert "References" in " ".join(p.text for p in pages)
            document = docx.Document(io.BytesIO(files["docx"]))
            assert "References" in [p.text for p in document.paragraphs]
            assert b'class="citation"' in files["html"]
            refused = client.post("/research", json={"question": QUESTION, "sources": "scholar"})
            assert refused.status_code == 422 and "arxiv" in refused.text
            late = client.post(
                "/research", json={"question": QUESTION, "since": "2030", "until": "2020"}
            )
            assert late.status_code == 422 and "after --until" in late.text
        agent.close()


def test_mcp_research_takes_sources_and_scope_and_serves_a_resource_per_format(
    apis: Stub, tmp_path: Path
) -> None:
    import base64

    import anyio
    from mcp_types import BlobResourceContents, TextResourceContents

    from local2.ui.server import create_app
    from tests.mcp_clients import http_session, structured

    async def used(mcp: str) -> dict[str, Any]:
        async with http_session(mcp) as session:
            args = {"question": QUESTION, "sources": "arxiv,pubmed", "since": "2024-01-01"}
            result = structured(await session.call_tool("research", args))
            run_id = result["run_id"]
            texts = {}
            for fmt in ("bibtex", "ris", "csl"):
                read = await session.read_resource(f"local2://research/{run_id}/references.{fmt}")
                content = read.contents[0]
                assert isinstance(content, TextResourceContents)
                texts[fmt] = (content.text, content.mime_type)
            for fmt in ("pdf", "docx"):
                read = await session.read_resource(f"local2://research/{run_id}/report.{fmt}")
                blob = read.contents[0]
                assert isinstance(blob, BlobResourceContents)
                texts[fmt] = (blob.blob, blob.mime_type)
            read = await session.read_resource(f"local2://research/{run_id}/report.html")
            page = read.contents[0]
            assert isinstance(page, TextResourceContents)
            texts["html"] = (page.text, page.mime_type)
            listed = await session.list_resource_templates()
            texts["templates"] = (" ".join(t.uri_template for t in listed.resource_templates), "")
            refused = await session.call_tool("research", {"question": QUESTION, "sources": "x"})
            return {"result": result, "texts": texts, "refused": refused}

    with FakeOllama(ResearchBrain()) as fake:
        agent = Agent(settings_for(fake, apis, tmp_path / "data"), backend="ollama")
        with Served(create_app(agent, ui=False)) as url:
            got = anyio.run(used, f"{url}/mcp")
        agent.close()
    result = got["result"]
    assert result["status"] == "done"
    assert all(s["meta"]["provider"] in ("arxiv", "pubmed") for s in result["sources"])
    bib, media = got["texts"]["bibtex"]
    assert media == "application/x-bibtex"
    assert len(bibtexparser.parse_string(bib).entries) == len(result["sources"])
    assert len(rispy.loads(got["texts"]["ris"][0])) == len(result["sources"])
    assert len(json.loads(got["texts"]["csl"][0])) == len(result["sources"])
    refused = got["refused"]
    assert refused.is_error and "unknown source 'x'" in refused.content[0].text
    pdf, media = got["texts"]["pdf"]
    assert media == "application/pdf"
    pages = read_document(base64.b64decode(pdf), load_settings().documents, name="r.pdf").pages
    assert "References" in " ".join(p.text for p in pages)
    word, media = got["texts"]["docx"]
    assert media == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    document = docx.Document(io.BytesIO(base64.b64decode(word)))
    assert "References" in [p.text for p in document.paragraphs]
    html, media = got["texts"]["html"]
    assert media == "text/html" and 'class="citation"' in html
    for fmt in ("html", "pdf", "docx"):
        assert f"local2://research/{{run_id}}/report.{fmt}" in got["texts"]["templates"][0]
