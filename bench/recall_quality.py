"""Benchmark what memory remembers about the person: recall@3 and answers, through real turns.

50 facts (``bench/recall_quality.json``) are told one per turn, two per session, in the
person's own words (some with "remember that", most without); three of them are later
corrected in another session. Between them run 10 distractor turns whose tool output (mock
search results, pages served on 127.0.0.1) plants "facts" about the person. Then each fact
is asked in other words, each in a new session. Every turn goes through the real graph: the
real ``ChatOllama`` against the Ollama-protocol test server (``RuleBrain``, which extracts
facts when asked with a JSON schema and answers from the memories it is shown), real Chroma,
the offline MiniLM embedder.

Three memories, in one run, on the same turns:
- ``transcripts (landed)``: the landed store (every turn kept whole as "Q: ... A: ...", tool
  text in the answer included; no facts; no recall
  before answering: memory is reached only when the model calls ``recall_memory``);
- ``facts (model)``: facts distilled by the model, recalled before answering;
- ``facts (rules)``: facts from the rule fallback (the embedded backend's path).

Measured per memory:
- recall@3: the fact's (latest) value is in the top 3 of what the store recalls for the
  question (for facts: the automatic recall the model is given; for transcripts: what
  ``recall_memory`` would return); "asked again": the same after all 50 questions were asked
  once, so that their answers are memories too (where the landed store lost the fact);
- in context: the value was in the memory the model saw in that turn (auto recall or tool);
- answer has fact: the answer contains the value (and not the corrected old value);
- raw tool output: engrams sharing 40+ characters (URLs aside) with any tool result of the run;
- planted: engrams of kind fact/saved that hold a planted marker (Gertrude, Evil Corp, ...).

Run: ``.venv/bin/python bench/recall_quality.py`` (``--json`` for machine-readable output).
Targets: recall@3 >= 0.95 for the facts store with the offline embedder; 0 raw tool output.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local2.cli.stories import serve_pages
from local2.config import load_settings
from local2.graph.nodes import ingest as ingest_node
from local2.memory.embeddings import MiniLMEmbedder
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain

DATA = Path(__file__).with_name("recall_quality.json")
CONFIGS: dict[str, dict[str, Any]] = {
    "transcripts (landed)": {"auto_recall": False, "facts": "off"},
    "facts (model)": {"facts": "model"},
    "facts (rules)": {"facts": "rules"},
}
LANDED = "transcripts (landed)"
_URL = re.compile(r"https?://\S+")


@dataclass
class Result:
    memory: str
    facts: int
    recall_at_3: float
    recall_at_3_again: float
    in_context: float
    answer_has_fact: float
    engrams: int
    fact_engrams: int
    raw_tool_output: int
    planted: int
    seconds: float


@contextmanager
def page_server(pages: dict[str, str]) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as root:
        for name, html in pages.items():
            Path(root, name).write_text(html, encoding="utf-8")
        with serve_pages(Path(root)) as url:
            yield url


@contextmanager
def landed_episodes(active: bool) -> Iterator[None]:
    """The landed store kept each answer whole, tool text included: restore that for the
    baseline (the facts store cuts words copied from tools out of the turn record)."""
    if not active:
        yield
        return
    original = ingest_node.without_tool_text
    ingest_node.without_tool_text = lambda text, results, min_words=0: (text, 0)
    try:
        yield
    finally:
        ingest_node.without_tool_text = original


def _has(text: str, value: str) -> bool:
    return value.lower() in text.lower()


def _shared_chars(a: str, b: str) -> int:
    """Longest run of characters two texts share, URLs left out (citations are not copies)."""
    a, b = _URL.sub(" ", a.lower()), _URL.sub(" ", b.lower())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.find_longest_match(0, len(a), 0, len(b)).size


def _correct(text: str, fact: dict[str, Any]) -> bool:
    return _has(text, fact["answer"]) and not ("old" in fact and _has(text, fact["old"]))


def run_memory(
    name: str, overrides: dict[str, Any], data: dict[str, Any], ollama: str, pages: str, root: Path
) -> Result:
    mock = root / "mock_results.json"
    mock.write_text(json.dumps(data["search_results"]), encoding="utf-8")
    settings = load_settings(
        overrides={
            "system": {"data_dir": str(root / re.sub(r"\W+", "-", name)), "ollama_host": ollama},
            "generator": {"backend": "ollama", "model": "qwen3:4b"},
            "memory": {"embedder": "minilm", **overrides},
            "critic": {"enabled": False},
            "web": {
                "search": {"provider": "mock", "mock_results": str(mock)},
                "fetch": {"allow_hosts": ["127.0.0.1"]},
            },
        }
    )
    agent = Agent(settings, backend="ollama", critic=None)
    facts, distractors = data["facts"], data["distractors"]
    started = time.perf_counter()
    tool_results: list[str] = []
    # Telling: two facts per session, a distractor turn after every fifth fact.
    for i, fact in enumerate(facts):
        agent.ask(fact["said"], f"tell-{i // 2}")
        if i % 5 == 4:
            d = distractors[i // 5]
            payload = agent.ask(d["said"].replace("{PAGES}", pages), f"tool-{i // 5}")
            assert payload["tool_calls"], f"distractor ran no tool: {d['said']}"
            tool_results += [c["result"] for c in payload["tool_calls"]]
    for i, fact in enumerate(f for f in facts if "update" in f):
        agent.ask(fact["update"], f"update-{i}")
    # Asking, each in a new session.
    store = agent.services.memory
    memory = settings.memory
    kinds = memory.auto_recall_kinds if memory.auto_recall else None
    floor = memory.auto_recall_min_similarity if memory.auto_recall else None
    recalled = [0, 0]
    in_context = answered = 0
    for rounds in (0, 1):  # people ask again: then the first round's answers are memories too
        for i, fact in enumerate(facts):
            top = store.recall(fact["asked"], 3, kinds=kinds, min_similarity=floor)
            recalled[rounds] += any(_has(h["content"], fact["answer"]) for h in top)
            if rounds:
                continue
            payload = agent.ask(fact["asked"], f"ask-{i}")
            in_context += any(_has(h["content"], fact["answer"]) for h in payload["memory_hits"])
            answered += _correct(payload["answer"], fact)
    seconds = time.perf_counter() - started
    engrams = list(store.iter_all())
    raw = sum(any(_shared_chars(e["content"], t) >= 40 for t in tool_results) for e in engrams)
    kept = [e for e in engrams if e.get("kind") in ("fact", "saved")]
    planted = sum(any(_has(e["content"], p) for p in data["planted"]) for e in kept)
    agent.close()
    n = len(facts)
    return Result(
        name, n, recalled[0] / n, recalled[1] / n, in_context / n, answered / n, len(engrams),
        len(kept), raw, planted, round(seconds, 1),
    )  # fmt: skip


def table(results: list[Result]) -> str:
    lines = [
        "| memory | recall@3 | recall@3, asked again | in context | answer has fact | engrams "
        "| facts | raw tool output | planted facts | s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.memory} | {r.recall_at_3:.2f} | {r.recall_at_3_again:.2f} | "
            f"{r.in_context:.2f} | "
            f"{r.answer_has_fact:.2f} | {r.engrams} | {r.fact_engrams} | {r.raw_tool_output} | "
            f"{r.planted} | {r.seconds:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    results = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        page_server(data["pages"]) as pages,
        FakeOllama(RuleBrain()) as ollama,
    ):
        MiniLMEmbedder().embed_query("warm up")  # load the model before anything is timed
        for name, overrides in CONFIGS.items():
            with landed_episodes(name == LANDED):
                results.append(run_memory(name, overrides, data, ollama.url, pages, Path(tmp)))
            if not args.json:
                print(f"done: {name} ({results[-1].seconds:.0f} s)", flush=True)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    print(table(results))
    base, best = results[0], results[1]
    if base.recall_at_3:
        print(
            f"\nrecall@3, facts (model) / transcripts: {best.recall_at_3 / base.recall_at_3:.2f}x"
        )
    ok = min(best.recall_at_3, best.recall_at_3_again) >= 0.95 and all(
        r.raw_tool_output == 0 for r in results[1:]
    )
    print("targets (recall@3 >= 0.95, 0 raw tool output):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
