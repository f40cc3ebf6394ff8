"""What the research tests share: the extraction corpus and its question, a research run on the
loopback web, the plans and steers the scripted brain is given."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from local2.config import load_settings
from local2.service.agent import Agent
from local2.service.research._research import Research
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_web import LoopbackWeb, research_overrides


def branches(*queries: str, top: int = 1) -> dict[str, Any]:
    """A plan with one sub-question per query: search it, read its top result; compose."""
    steps: list[dict[str, Any]] = []
    for n, query in enumerate(queries):
        steps += [
            {
                "id": f"a{n}",
                "description": "",
                "tool": "web_search",
                "args": {"query": query},
                "requires": [],
            },
            {
                "id": f"b{n}",
                "description": "",
                "tool": "web_fetch",
                "args": {"from_step": f"a{n}", "top": top},
                "requires": [f"a{n}"],
            },
        ]
    compose = {"id": "c", "description": "", "tool": "compose", "args": {}, "requires": []}
    return {"goal": "g", "steps": [*steps, compose]}


def plan_requests(fake: FakeOllama) -> list[dict[str, Any]]:
    return [r for r in fake.chat_requests if (r.get("format") or {}).get("title") == "ResearchPlan"]


def compose_prompt(fake: FakeOllama) -> str:
    """The last report request's prompt: the question, what the person said, the sources."""
    composed = [
        r
        for r in fake.chat_requests
        if str(r["messages"][0]["content"]).startswith("You write a research report")
    ]
    return str(composed[-1]["messages"][-1]["content"])


def paused(items: list[tuple[str, Any]]) -> dict[str, Any]:
    kinds = [k for k, _ in items]
    assert kinds[-2:] == ["awaiting_input", "final"], kinds
    assert items[-1][1]["status"] == "awaiting_input"
    return dict(items[-2][1])


def steer_at_first_step(
    run: Research, items: Iterator[tuple[str, Any]], says: list[dict[str, Any]]
) -> dict[str, Any]:
    """Read the run's items; while its first step runs, put ``says`` in its inbox."""
    payload: dict[str, Any] = {}
    said = False
    for kind, data in items:
        if kind == "event" and data["subject"] == "research.step" and not said:
            said = True
            for say in says:
                run.steer(run_of(run), say)
        if kind == "final":
            payload = data
    return payload


def run_of(run: Research) -> str:
    (only,) = run.driver.running
    return only


CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"


def research_agent(fake: FakeOllama, web: LoopbackWeb, tmp_path: Path) -> Agent:
    """An agent over the fake Ollama and the loopback web, memory off."""
    overrides = research_overrides(web, tmp_path / "data")
    overrides["system"]["ollama_host"] = fake.url
    overrides["memory"] = {"enabled": False}
    return Agent(load_settings(overrides=overrides), backend="ollama")


def read_events(response: httpx.Response) -> list[tuple[str, Any]]:
    received, name = [], ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            received.append((name, json.loads(line.removeprefix("data: "))))
    return received


QUESTION = "Why did Kelsby keep its harbour swing bridge?"


def environment(web: LoopbackWeb, tmp_path: Path, ollama: str, memory: bool = False) -> dict:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "web.yaml").write_text(
        f"search:\n  provider: searxng\n  searxng_url: {web.url}\n"
        f"fetch:\n  allow_hosts: ['{web.host}']\n"
    )
    (conf / "memory.yaml").write_text(f"enabled: {str(memory).lower()}\n")
    (conf / "research.yaml").write_text("retry_backoff_s: 0.05\n")
    return {
        "OLLAMA_HOST": ollama,
        "LOCAL2_HOME": str(tmp_path / "home"),
        "LOCAL2_CONFIG": str(conf),
    }


def research(
    fake: FakeOllama, web: LoopbackWeb, tmp_path: Path, memory: bool = False, **section: Any
) -> Research:
    overrides = research_overrides(web, tmp_path / "data")
    overrides["system"]["ollama_host"] = fake.url
    overrides["generator"] = {"backend": "ollama"}
    overrides["memory"] = {"enabled": memory}
    overrides["research"].update(section)
    return Research(load_settings(overrides=overrides), backend="ollama")


def plan(*steps: dict[str, Any]) -> dict[str, Any]:
    last = steps[-1]["id"]
    compose = {"id": "c", "description": "Write", "tool": "compose", "args": {}, "requires": [last]}
    return {"goal": "Answer", "steps": [*steps, compose]}


def search(step_id: str, query: str) -> dict[str, Any]:
    return {
        "id": step_id,
        "description": "Search",
        "tool": "web_search",
        "args": {"query": query},
        "requires": [],
    }


def read(step_id: str, source: str, top: int, *requires: str) -> dict[str, Any]:
    return {
        "id": step_id,
        "description": "Read",
        "tool": "web_fetch",
        "args": {"from_step": source, "top": top},
        "requires": [source, *requires],
    }


BRIDGE, OTTERS, MILL = "Kelsby harbour bridge", "otters Lune survey", "tide mill Europe"
