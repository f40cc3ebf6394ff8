"""Where chat's web search looks, through the real parts: the HTTP API under uvicorn with
httpx, the MCP server at ``/mcp`` through the SDK's client, ChatOllama against the test kit's
Ollama-protocol server, and the arXiv and PubMed APIs' recorded answers served on 127.0.0.1
(``tests/research/test_research_sources.py``).

A turn told ``sources: arxiv,pubmed`` searches both through research's sourced search: the
APIs are asked, the model reads their hits, and each hit's record (date, authors, DOI,
retracted) is on the tool call. An unknown source is refused with the known ones;
``web.search.sources`` is the default, and with ``[web]`` a turn searches as it always did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from local2.config import Settings
from local2.service.agent import Agent
from local2.ui.server import create_app
from local2_testkit.brains import Reply, message_text, tool_names
from local2_testkit.ollama_server import FakeOllama
from tests.http.test_api import Served
from tests.mcp_clients import http_session, structured
from tests.research.test_research_sources import scholarly_apis, settings_for
from tests.scholarly_stub import Stub

QUESTION = "What does research say about sleep and declarative memory?"
PREPRINT = "Slow-wave sleep consolidates declarative memory"  # arXiv's 2024 entry's title


def searcher(request: dict[str, Any]) -> Reply:
    """Searches once, then answers with the first title the search gave."""
    messages = request.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        text = message_text(messages[-1])
        title = next((ln for ln in text.splitlines() if "Title:" in ln), "nothing found")
        return Reply(content=f"The search found: {title.split('Title:', 1)[1].strip()}")
    if "web_search" in tool_names(request):
        return Reply(tool_calls=[{"name": "web_search", "arguments": {"query": "sleep memory"}}])
    return Reply(content="No tools were offered.")


@pytest.fixture
def apis() -> Iterator[Stub]:
    with scholarly_apis() as server:
        yield server


def chat_settings(fake: FakeOllama, apis: Stub, data: Path) -> Settings:
    settings = settings_for(fake, apis, data)
    settings.web.search.provider = "mock"  # the web, when it is asked: canned, offline
    return settings


def tool_messages(fake: FakeOllama) -> str:
    return "\n".join(
        message_text(m)
        for r in fake.chat_requests
        for m in r.get("messages") or []
        if m.get("role") == "tool"
    )


def test_a_turn_over_http_searches_the_sources_it_names_and_carries_their_records(
    apis: Stub, tmp_path: Path
) -> None:
    with FakeOllama(searcher) as fake:
        agent = Agent(chat_settings(fake, apis, tmp_path / "data"), backend="ollama")
        with Served(create_app(agent, ui=False)) as url, httpx.Client(base_url=url) as client:
            asked = client.post(
                "/query", json={"query": QUESTION, "sources": "arxiv,pubmed"}, timeout=60
            )
            shown = tool_messages(fake)
            refused = client.post("/query", json={"query": QUESTION, "sources": ["web", "x"]})
            plain = client.post("/query", json={"query": QUESTION}, timeout=60)
        agent.close()
    assert asked.status_code == 200, asked.text
    payload = asked.json()
    assert PREPRINT in payload["answer"]
    call = payload["tool_calls"][0]
    assert call["tool"] == "web_search" and call["provider"] == "arxiv+pubmed"
    assert len(apis.asked("/api/query")) == 1 and apis.asked("/entrez/eutils/esearch.fcgi")
    assert PREPRINT in shown  # the model read the hits
    records = call["sources"]
    preprint = next(r for r in records.values() if r["provider"] == "arxiv")
    assert preprint["published"] == "2024-02-14" and preprint["doi"] == "10.1000/sleep.2024.1"
    assert preprint["authors"][:2] == ["Ada Lovelace", "Grace Hopper"]
    assert any(r["provider"] == "pubmed" and r["retracted"] for r in records.values())
    assert set(records) <= set(call["result"].split())  # each under the URL the model read
    # an unknown source: refused, the known ones listed, nothing run
    assert refused.status_code == 422
    assert "unknown source 'x'" in refused.text and "semantic_scholar" in refused.text
    # no sources: web.search.sources ([web]): the web as before, no scholarly API asked
    assert plain.status_code == 200, plain.text
    plain_call = plain.json()["tool_calls"][0]
    assert plain_call["provider"] == "mock" and "sources" not in plain_call
    assert len(apis.asked("/api/query")) == 1


def test_web_search_sources_is_the_default_and_mcp_ask_takes_sources(
    apis: Stub, tmp_path: Path
) -> None:
    async def ask(mcp: str) -> tuple[dict[str, Any], Any]:
        async with http_session(mcp) as session:
            answered = structured(
                await session.call_tool("ask", {"question": QUESTION, "sources": "arxiv"})
            )
            refused = await session.call_tool("ask", {"question": QUESTION, "sources": "nope"})
            return answered, refused

    with FakeOllama(searcher) as fake:
        settings = chat_settings(fake, apis, tmp_path / "data")
        settings.web.search.sources = ["pubmed"]
        agent = Agent(settings, backend="ollama")
        by_default = agent.turns.ask(QUESTION)
        pubmed_asked = len(apis.asked("/entrez/eutils/esearch.fcgi"))
        arxiv_asked = len(apis.asked("/api/query"))
        with Served(create_app(agent, ui=False)) as url:
            answered, refused = anyio.run(ask, f"{url}/mcp")
        agent.close()
    call = by_default["tool_calls"][0]
    assert call.get("provider") == "pubmed" and pubmed_asked == 1
    assert all(r["provider"] == "pubmed" for r in call["sources"].values())
    assert arxiv_asked == 0  # arXiv was not among the default's sources
    assert PREPRINT in answered["answer"]  # MCP ask's sources: arXiv
    assert len(apis.asked("/api/query")) == 1
    assert refused.is_error and "unknown source 'nope'" in refused.content[0].text
