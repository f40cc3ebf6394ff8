"""Benchmark what memory remembers about the person: recall@3 and answers, through real turns.

51 facts (``bench/recall_quality.json``) are told one per turn, two per session, in the
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
- planted: engrams of kind fact/saved that hold a planted marker (Gertrude, Evil Corp, ...);
- unrelated offered: of 30 questions not about the person, each on one fact's topic ("Name
  three primary colours." beside "The user's favourite colour is green."), asked as turns,
  those given a memory of the person before answering; answered from it: the answer holds
  the value of a fact offered ("green").

Then the floor for questions not about the person (``auto_recall_general_min_similarity``,
:mod:`local2.memory._shelf`) is swept on the facts stores, in the same run: what each
floor would offer for the 51 questions about the person and for the 30 unrelated ones, and
the same for a floor alone (one floor for every question, the landed recall's rule).

Run: ``.venv/bin/python bench/recall_quality.py`` (``--json`` for machine-readable output).
Targets: recall@3 >= 0.95 for the facts store with the offline embedder; 0 raw tool output;
at most 10% of the unrelated questions offered a memory.
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

from local2.cli._stories import serve_pages
from local2.config import load_settings
from local2.graph import _turn as remembering
from local2.memory._embedders import MiniLMEmbedder
from local2.memory._shelf import offered
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
    unrelated_offered: float
    unrelated_answered: float
    seconds: float
    sweep: list[dict[str, float]]


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
    original = remembering.without_tool_text
    remembering.without_tool_text = lambda text, results, min_words=0: (text, 0)
    try:
        yield
    finally:
        remembering.without_tool_text = original


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
        agent.turns.ask(fact["said"], f"tell-{i // 2}")
        if i % 5 == 4:
            d = distractors[i // 5]
            payload = agent.turns.ask(d["said"].replace("{PAGES}", pages), f"tool-{i // 5}")
            assert payload["tool_calls"], f"distractor ran no tool: {d['said']}"
            tool_results += [c["result"] for c in payload["tool_calls"]]
    for i, fact in enumerate(f for f in facts if "update" in f):
        agent.turns.ask(fact["update"], f"update-{i}")
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
            if memory.auto_recall:  # what the automatic recall gives the model
                top = offered(fact["asked"], top, memory.auto_recall_min_similarity,
                              memory.auto_recall_general_min_similarity)  # fmt: skip
            recalled[rounds] += any(_has(h["content"], fact["answer"]) for h in top)
            if rounds:
                continue
            payload = agent.turns.ask(fact["asked"], f"ask-{i}")
            in_context += any(_has(h["content"], fact["answer"]) for h in payload["memory_hits"])
            answered += _correct(payload["answer"], fact)
    unrelated = ask_unrelated(agent, data["unrelated"], facts)
    sweep = floor_sweep(store, facts, data["unrelated"], kinds, floor) if floor is not None else []
    seconds = time.perf_counter() - started
    engrams = list(store.iter_all())
    raw = sum(any(_shared_chars(e["content"], t) >= 40 for t in tool_results) for e in engrams)
    kept = [e for e in engrams if e.get("kind") in ("fact", "saved")]
    planted = sum(any(_has(e["content"], p) for p in data["planted"]) for e in kept)
    agent.close()
    n = len(facts)
    return Result(
        name, n, recalled[0] / n, recalled[1] / n, in_context / n, answered / n, len(engrams),
        len(kept), raw, planted, *unrelated, round(seconds, 1), sweep,
    )  # fmt: skip


def ask_unrelated(
    agent: Agent, questions: list[str], facts: list[dict[str, Any]]
) -> tuple[float, float]:
    """Questions not about the person, each a turn in a new session: the share given a
    memory before answering, and the share whose answer holds the value of a fact offered."""
    given = used = 0
    for i, question in enumerate(questions):
        payload = agent.turns.ask(question, f"unrelated-{i}")
        hits = [h for h in payload["memory_hits"] if h["kind"] in ("fact", "saved")]
        values = [f["answer"] for f in facts for h in hits if _has(h["content"], f["answer"])]
        given += bool(hits)
        used += any(_has(payload["answer"], v) for v in values)
    return given / len(questions), used / len(questions)


SWEEP_FLOORS = (0.25, 0.35, 0.45, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 1.0)


def floor_sweep(
    store: Any, facts: list[dict[str, Any]], unrelated: list[str], kinds: Any, floor: float
) -> list[dict[str, float]]:
    """For each floor: recall@3 of the questions about the person and the share of unrelated
    questions offered a memory, with the person/name gate (the floor for the rest) and as
    one floor for every question."""
    asked = [(f["asked"], store.recall(f["asked"], 3, kinds=kinds, min_similarity=floor), f)
             for f in facts]  # fmt: skip
    others = [store.recall(q, 3, kinds=kinds, min_similarity=floor) for q in unrelated]
    rows = []
    for general in SWEEP_FLOORS:
        for rule in ("gate", "floor alone"):
            personal = floor if rule == "gate" else general

            def given(question: str, hits: list[Any]) -> list[Any]:
                return offered(question, hits, personal, general)  # noqa: B023

            recall = sum(
                any(_has(h["content"], f["answer"]) for h in given(q, top)) for q, top, f in asked
            ) / len(asked)
            off = sum(bool(given(q, top)) for q, top in zip(unrelated, others, strict=True))
            rows.append({"rule": rule, "floor": general, "recall_at_3": recall,
                         "unrelated_offered": off / len(unrelated)})  # fmt: skip
    return rows


def table(results: list[Result]) -> str:
    lines = [
        "| memory | recall@3 | recall@3, asked again | in context | answer has fact | engrams "
        "| facts | raw tool output | planted facts | unrelated offered | answered from it | s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.memory} | {r.recall_at_3:.2f} | {r.recall_at_3_again:.2f} | "
            f"{r.in_context:.2f} | "
            f"{r.answer_has_fact:.2f} | {r.engrams} | {r.fact_engrams} | {r.raw_tool_output} | "
            f"{r.planted} | {r.unrelated_offered:.2f} | {r.unrelated_answered:.2f} | "
            f"{r.seconds:.0f} |"
        )
    return "\n".join(lines)


def sweep_table(results: list[Result]) -> str:
    """Each floor, for each facts store: recall@3 and unrelated offered, gated and alone."""
    swept = [r for r in results if r.sweep]
    head = " | ".join(f"{r.memory}: {k}" for r in swept for k in ("gate", "floor alone"))
    lines = [f"| floor | {head} |", "|---:|" + "---:|" * 2 * len(swept)]
    for floor in SWEEP_FLOORS:
        cells = []
        for r in swept:
            for rule in ("gate", "floor alone"):
                row = next(x for x in r.sweep if x["floor"] == floor and x["rule"] == rule)
                cells.append(f"{row['recall_at_3']:.2f} / {row['unrelated_offered']:.2f}")
        lines.append(f"| {floor:.2f} | " + " | ".join(cells) + " |")
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
    print("\nrecall@3 / unrelated offered, by the floor for questions not about the person:")
    print(sweep_table(results))
    base, best = results[0], results[1]
    if base.recall_at_3:
        print(
            f"\nrecall@3, facts (model) / transcripts: {best.recall_at_3 / base.recall_at_3:.2f}x"
        )
    ok = (
        min(best.recall_at_3, best.recall_at_3_again) >= 0.95
        and all(r.raw_tool_output == 0 for r in results[1:])
        and all(r.unrelated_offered <= 0.10 for r in results[1:])
    )
    print(
        "targets (recall@3 >= 0.95, 0 raw tool output, <= 10% unrelated offered):",
        "met" if ok else "NOT met",
    )


if __name__ == "__main__":
    main()
