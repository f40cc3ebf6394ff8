"""What the scholarly-sources tests share: the planted source, its question, the recorded scholarly
APIs and settings for them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from local2.config import load_settings
from local2.service.agent import Agent
from local2.service.research._research import Research
from local2_testkit.documents import pdf_of
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_web import LoopbackWeb, research_overrides
from tests.kit.scholarly_stub import Reply, Stub, recorded, stub

QUESTION = "Does sleep consolidate declarative memory?"


ATOM = "application/atom+xml; charset=UTF-8"


PLANTED = "Zorblax hibernation"  # the out-of-scope paper's words: never in a model request


PDF_PAGES = [
    ["Sleep and memory in adults.", "Methods: forty adults slept in the laboratory."],
    [
        "Results: slow-wave sleep consolidates declarative memory in adults.",
        "Recall after sleep was 21 percent higher than after the same hours awake.",
    ],
]


def arxiv_feed(pdf_url: str) -> bytes:
    """Two entries: a 2024 preprint with its PDF on loopback, and a 2019 one (planted: the
    stub sends it although the request's window leaves it out)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"
      xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
      xmlns:arxiv="http://arxiv.org/schemas/atom">
  <opensearch:totalResults>2</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/2402.04321v1</id>
    <published>2024-02-14T10:00:00Z</published>
    <title>Slow-wave sleep consolidates declarative memory</title>
    <summary>Slow-wave sleep consolidates declarative memory in adults, a laboratory study
      of forty sleepers.</summary>
    <author><name>Ada Lovelace</name></author>
    <author><name>Grace Hopper</name></author>
    <arxiv:doi>10.1000/sleep.2024.1</arxiv:doi>
    <link title="pdf" href="{pdf_url}" rel="related" type="application/pdf"/>
  </entry>
  <entry>
    <id>http://arxiv.org/abs/1901.00001v1</id>
    <published>2019-01-02T10:00:00Z</published>
    <title>{PLANTED} and memory</title>
    <summary>{PLANTED} of rodents erases declarative memory of sleep.</summary>
    <author><name>Old Author</name></author>
  </entry>
</feed>""".encode()


@contextmanager
def scholarly_apis(more: dict[str, list[Reply]] | None = None) -> Iterator[Stub]:
    """arXiv's and PubMed's recorded answers, and the preprint's PDF, on one loopback server
    (``more``: other routes beside them)."""
    with stub(
        {
            **(more or {}),
            "/api/query": [Reply(b"", ctype=ATOM)],
            "/entrez/eutils/esearch.fcgi": [Reply(recorded("pubmed_esearch.json"))],
            "/entrez/eutils/efetch.fcgi": [Reply(recorded("pubmed_efetch.xml"), ctype="text/xml")],
            "/pdf/2402.04321": [Reply(pdf_of(PDF_PAGES, "Sleep"), ctype="application/pdf")],
        }
    ) as server:
        server.replies["/api/query"] = [
            Reply(arxiv_feed(server.url("/pdf/2402.04321")), ctype=ATOM)
        ]
        yield server


def settings_for(fake: FakeOllama, apis: Stub, data: Path, **research: Any) -> Any:
    host = apis.url("").removeprefix("http://")
    return load_settings(
        overrides={
            "system": {"data_dir": str(data), "ollama_host": fake.url},
            "generator": {"backend": "ollama"},
            "memory": {"enabled": False},
            "critic": {"enabled": False},
            "web": {"fetch": {"allow_hosts": [host], "timeout_s": 5}},
            "research": {"retry_backoff_s": 0.05, "max_rounds": 1, **research},
            "scholarly": {
                "arxiv": {"base_url": apis.url("/api/query")},
                "pubmed": {"base_url": apis.url("/entrez/eutils"), "min_interval_s": 0},
            },
        }
    )


def run(settings: Any, **options: Any) -> dict[str, Any]:
    research = Research(settings, backend="ollama")
    try:
        return dict(research.run(QUESTION, **options))
    finally:
        research.close()


def model_text(fake: FakeOllama) -> str:
    return "\n".join(str(b.get("messages")) for b in fake.chat_requests)


def scholarly_agent(fake: FakeOllama, web: LoopbackWeb, apis: Stub, data: Path) -> Agent:
    """The app's agent for a research run over the loopback web and the recorded arXiv and
    PubMed APIs (their PDFs fetched from the stub), one round, no memory."""
    overrides = research_overrides(web, data)
    overrides["system"]["ollama_host"] = fake.url
    overrides["memory"] = {"enabled": False}
    overrides["research"].update(max_rounds=1)
    overrides["web"]["fetch"]["allow_hosts"].append(apis.url("").removeprefix("http://"))
    overrides["scholarly"] = {
        "arxiv": {"base_url": apis.url("/api/query")},
        "pubmed": {"base_url": apis.url("/entrez/eutils"), "min_interval_s": 0},
    }
    return Agent(load_settings(overrides=overrides), backend="ollama")
