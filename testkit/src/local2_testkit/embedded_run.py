"""The set-up shared by the capture of the embedded model's real outputs and their replay.

``scripts/capture_embedded_outputs.py`` runs the real SmolLM2 through the real graph on the
questions of ``tests/fixtures/embedded_run`` and records every raw reply; the tests replay
those replies through the same graph and tools (canned search results, the fixture pages on
a loopback server, memory on a lexical embedder) to check what reaches the person.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from local2.config import Settings, load_settings

PAGES = "{PAGES}"  # placeholder for the loopback page server in questions and results


@dataclass(frozen=True)
class Question:
    id: str
    session: str
    query: str  # with {PAGES}


def load_questions(run_dir: Path) -> list[Question]:
    data = yaml.safe_load((run_dir / "questions.yaml").read_text(encoding="utf-8"))
    return [Question(str(q["id"]), str(q["session"]), str(q["query"])) for q in data["questions"]]


def with_pages(text: str, pages_url: str) -> str:
    return text.replace(PAGES, pages_url)


def without_pages(value: Any, pages_url: str) -> Any:
    """``value`` (text, or JSON-like data) with the page server's URL put back as {PAGES}."""
    return json.loads(json.dumps(value).replace(pages_url, PAGES))


def run_settings(run_dir: Path, work: Path, pages_url: str, **embedded: Any) -> Settings:
    """Embedded backend, canned search, the pages fetchable, memory on a lexical embedder."""
    results = work / "search_results.json"
    template = (run_dir / "search_results.json").read_text(encoding="utf-8")
    results.write_text(with_pages(template, pages_url), encoding="utf-8")
    return load_settings(
        overrides={
            "system": {"data_dir": str(work / "data"), "checkpointer": "memory"},
            "generator": {"backend": "embedded"},
            "embedded": embedded,
            "web": {
                "search": {"provider": "mock", "mock_results": str(results)},
                "fetch": {"allow_hosts": [pages_url.removeprefix("http://")]},
            },
            "memory": {"embedder": "lexical"},
        }
    )
