"""Eval corpus benchmark: the BM25 index of the ``corpus`` search provider at 100,000 passages.

What it measures, each phase in a fresh process so memory is its own:

- **build**: ``CorpusIndex`` over N generated passages (split, tokenise with ``terms``,
  bm25s index), wall seconds, and resident memory before and after (``VmRSS``) and at its
  peak (``VmHWM``); baseline in the same run: tokenising the same passages alone, the floor
  any BM25 index pays.
- **query**: ``CorpusIndex.search(q, 5)`` for Q queries of 2-6 words, median and p95 ms;
  baseline in the same run: BM25 built and scored at once, as a page's passages are
  (``retrieval.bm25_scores``), over the same tokenised passages, on the first few queries,
  and whether both put the same passage first.

Passages are generated, deterministic for ``--seed``: sentences of 8-20 words drawn from a
Zipf-like vocabulary of 50,000 words (the demo set's own words among them), about 60 words a
passage, like the paragraphs of a HotpotQA context.

    .venv/bin/python bench/eval.py [--passages 100000] [--queries 300] [--baseline-queries 5]

``--runner`` measures the eval runner instead: its time outside the model per question
(:func:`runner_bench`).

    .venv/bin/python bench/eval.py --runner [--rounds 4]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from local2.evals import load_set, set_path
from local2.retrieval import bm25_scores, terms
from local2.tools._corpus import CorpusDocument, CorpusIndex

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def vocabulary(rng: random.Random, size: int) -> list[str]:
    """The demo set's words first (so queries read like questions), then made-up ones."""
    seen = dict.fromkeys(
        w.lower()
        for d in load_set(set_path("demo")).documents
        for w in d.text.split()
        if w.isalpha()
    )
    while len(seen) < size:
        seen.setdefault("".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 11))))
    return list(seen)[:size]


def passages(count: int, seed: int) -> list[CorpusDocument]:
    rng = random.Random(seed)
    words = vocabulary(rng, 50_000)
    weights = list(itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(len(words))))
    docs = []
    for i in range(count):
        sentences = []
        length = 0
        while length < 60:
            n = rng.randint(8, 20)
            sentence = rng.choices(words, cum_weights=weights, k=n)
            sentences.append(" ".join(sentence).capitalize() + ".")
            length += n
        docs.append(CorpusDocument(f"p{i}", f"Passage {i}", " ".join(sentences)))
    return docs


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed + 1)
    words = vocabulary(random.Random(seed), 50_000)
    return [" ".join(rng.sample(words[:20_000], rng.randint(2, 6))) for _ in range(count)]


def memory_mb() -> dict[str, float]:
    status = Path("/proc/self/status").read_text()
    values = {}
    for line in status.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values


def phase(name: str, args: argparse.Namespace) -> dict[str, object]:
    docs = passages(args.passages, args.seed)
    bare = memory_mb()
    if name != "tokenise":
        import bm25s  # noqa: F401  (its import, numpy's with it, is not the index)
    before = memory_mb()
    if name == "tokenise":
        start = time.perf_counter()
        tokens = [terms(d.text) for d in docs]
        seconds = time.perf_counter() - start
        return {
            "seconds": seconds,
            "tokens": sum(map(len, tokens)),
            "before": before,
            "after": memory_mb(),
        }
    start = time.perf_counter()
    index = CorpusIndex("bench", docs)
    seconds = time.perf_counter() - start
    after = memory_mb()
    matrix = index.matrix_bytes
    texts = sum(len(d.text) for d in docs)
    result: dict[str, object] = {
        "seconds": seconds,
        "imports_mb": before["VmRSS"] - bare["VmRSS"],
        "before": before,
        "after": after,
        "passages": len(index.passages),
        "vocabulary": len(index.vocab),
        "matrix_mb": matrix / 2**20,
        "text_mb": texts / 2**20,
    }
    if name == "query":
        asked = queries(args.queries, args.seed)
        index.search(asked[0], 5)  # the first call imports numpy's paths
        times = []
        for q in asked:
            start = time.perf_counter()
            index.search(q, 5)
            times.append((time.perf_counter() - start) * 1000)
        tokenised = [terms(p) for p in index.passages]
        base_times, agree = [], 0
        for q in asked[: args.baseline_queries]:
            start = time.perf_counter()
            scores = bm25_scores(tokenised, set(terms(q)), k1=1.5, b=0.75)
            best = max(range(len(scores)), key=lambda i: (scores[i], -i))
            base_times.append((time.perf_counter() - start) * 1000)
            agree += index.search(q, 1)[0].passage == index.passages[best]
        result.update(
            median_ms=statistics.median(times),
            p95_ms=sorted(times)[int(0.95 * len(times)) - 1],
            baseline_median_ms=statistics.median(base_times),
            top1_agree=f"{agree}/{len(base_times)}",
        )
    return result


def run_phase(name: str, args: argparse.Namespace) -> dict[str, object]:
    command = [
        sys.executable,
        __file__,
        "--phase",
        name,
        "--passages",
        str(args.passages),
        "--queries",
        str(args.queries),
        "--baseline-queries",
        str(args.baseline_queries),
        "--seed",
        str(args.seed),
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--baseline-queries", type=int, default=5)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--phase", choices=("tokenise", "build", "query"))
    parser.add_argument("--runner", action="store_true", help="the runner's own time instead")
    parser.add_argument("--rounds", type=int, default=4, help="--runner: rounds of each")
    args = parser.parse_args()
    if args.runner:
        runner_bench(args.rounds)
        return
    if args.phase:
        print(json.dumps(phase(args.phase, args)))
        return
    tokenise = run_phase("tokenise", args)
    build = run_phase("build", args)
    query = run_phase("query", args)
    rss = build["after"]["VmRSS"] - build["before"]["VmRSS"]  # type: ignore[index]
    peak = build["after"]["VmHWM"] - build["before"]["VmRSS"]  # type: ignore[index]
    print(
        f"{args.passages:,} passages ({build['text_mb']:.0f} MB of text, "
        f"{build['vocabulary']:,} distinct terms), seed {args.seed}\n"
    )
    print("| | LoCAL2 | baseline | ratio |\n|---|---:|---:|---:|")
    print(
        f"| build, s (baseline: tokenising alone) | {build['seconds']:.1f} | "
        f"{tokenise['seconds']:.1f} | {build['seconds'] / tokenise['seconds']:.2f}x |"
    )
    print(
        f"| query, median ms (baseline: pure-Python BM25) | {query['median_ms']:.2f} | "
        f"{query['baseline_median_ms']:.0f} | "
        f"{query['median_ms'] / query['baseline_median_ms']:.4f}x |"
    )
    print(f"| query, p95 ms | {query['p95_ms']:.2f} | | |")
    print(
        f"\nIndex memory: {rss:.0f} MB resident after the build ({peak:.0f} MB at its peak; "
        f"importing numpy and bm25s adds {build['imports_mb']:.0f} MB more), "
        f"of which the score matrix is {build['matrix_mb']:.0f} MB; top passage agrees with the "
        f"baseline on {query['top1_agree']} queries."
    )


# -- the runner's own time (part 2 of issue 39) -------------------------------------------------


def scripted_model() -> Any:
    """A model with no time of its own: each question is searched once (the corpus), then
    answered with its first gold answer; a grader's prompt gets ``GRADE: CORRECT``."""
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

    from local2.models import ScriptedChatModel

    golds = {q.question: q.answers[0] for q in load_set(set_path("demo")).questions}

    def reply(messages: list[BaseMessage]) -> AIMessage:
        text = str(messages[-1].content)
        if "<gold_answer>" in text:
            return AIMessage(content="It agrees.\nGRADE: CORRECT")
        question = next((q for q in golds if q in text), "")
        if not any(isinstance(m, ToolMessage) for m in messages):
            call = {"name": "web_search", "args": {"query": question}, "id": "s1"}
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=f"It is {golds.get(question, 'unknown')}.")

    return ScriptedChatModel(replies=[reply], repeat_last=True, model="scripted")


def runner_round(base: Any, parts: dict[str, Any]) -> float:
    """The demo set through the eval runner: seconds per question."""
    from local2.service import Evals

    evals = Evals(base.settings, base.access, base=base, **parts)
    start = time.perf_counter()
    total = 0
    for kind, data in evals.start("demo"):
        if kind == "final":
            total = data["summary"]["recorded"]
            assert data["summary"]["correct"] == total, data["summary"]
    return (time.perf_counter() - start) / total


def baseline_round(base: Any, parts: dict[str, Any]) -> float:
    """The same questions as plain turns of an agent with the run's settings, each graded by
    the same grader, without the runner: seconds per question."""
    from local2.contracts import collect_turn, nobody
    from local2.service.evals import make_grader, run_settings

    qset = load_set(set_path("demo"))
    start = time.perf_counter()
    agent = base.beside(
        run_settings(base.settings, qset), memory=None, memory_shelf=None, critic=None, **parts
    )
    grader = make_grader(agent.settings, agent.services)
    for q in qset.questions:
        payload = collect_turn(agent.turns.stream(q.question, None, nobody, tokens=False))
        verdict = grader.grade(q, payload["answer"])
        assert verdict.grade == "correct" and payload["tool_calls"], (payload, verdict)
    agent.close()
    return (time.perf_counter() - start) / len(qset.questions)


def runner_bench(rounds: int) -> None:
    """The runner against plain turns graded alike, alternated (A B B A ...) after a round
    of each to warm up (imports, the corpus index): the difference is the runner's own time
    per question, outside the model and outside the turn."""
    import tempfile

    from local2.config import load_settings
    from local2.service import Agent

    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(overrides={"system": {"data_dir": home}})
        model = scripted_model()
        parts = {"chat_model": model, "backend": "scripted", "model": "scripted"}
        base = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
        runner_round(base, parts), baseline_round(base, parts)  # warm up
        runner, baseline = [], []
        for i in range(rounds):
            order = (runner_round, baseline_round) if i % 2 == 0 else (baseline_round, runner_round)
            for measure in order:
                seconds = measure(base, parts)
                (runner if measure is runner_round else baseline).append(seconds * 1000)
        base.close()
    r, b = statistics.median(runner), statistics.median(baseline)
    print(f"demo set, 30 questions a round, {rounds} rounds of each (median of rounds)\n")
    print("| ms per question | runner | baseline: plain turns, graded alike | difference |")
    print("|---|---:|---:|---:|")
    print(f"| search, answer, grade, record | {r:.1f} | {b:.1f} | {r - b:+.1f} |")
    print(f"\nrounds, runner: {', '.join(f'{x:.1f}' for x in runner)}")
    print(f"rounds, baseline: {', '.join(f'{x:.1f}' for x in baseline)}")


if __name__ == "__main__":
    main()
