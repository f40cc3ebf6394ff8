"""What the memory tests share with the others: an agent on the fake Ollama with real memory."""

from __future__ import annotations

from pathlib import Path

from local2.service.agent import Agent
from tests.kit.helpers import make_settings


def ollama_agent(tmp_path: Path, url: str) -> Agent:
    settings = make_settings(
        tmp_path,
        system={"ollama_host": url},
        generator={"backend": "ollama"},
        memory={"embedder": "ollama"},
        web={"search": {"provider": "mock"}},  # canned results, should the model search
    )
    return Agent(settings, backend="ollama")
