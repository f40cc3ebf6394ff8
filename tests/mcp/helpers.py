"""What the MCP tests share: the extraction corpus, its question and an agent over it."""

from __future__ import annotations

from pathlib import Path

from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_web import LoopbackWeb, research_overrides

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"


QUESTION = "Why did Kelsby keep its bridge?"


def mcp_agent(fake: FakeOllama, web: LoopbackWeb, data: Path) -> Agent:
    overrides = research_overrides(web, data)
    overrides["system"]["ollama_host"] = fake.url
    overrides["memory"] = {"embedder": "lexical"}
    return Agent(load_settings(overrides=overrides), backend="ollama")
