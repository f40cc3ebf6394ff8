"""Benchmark: time a research round spends outside the model, this tree against another.

What steering added to every run (issue 38) sits outside the model: the run's inbox read at
each step boundary, the tools a step may call worked out from their metadata, sub-questions
kept beside the steps. This measures wall time minus the time inside chat-model calls, per
round, for the same runs in two trees, each with its own virtualenv: the real ChatOllama
against the Ollama-protocol server (ResearchBrain, two rounds a run), the searxng provider
and web_fetch against the loopback web, SQLite checkpoints. Runs alternate between the trees
(A, B, A, B...) so the machine's load falls on both alike; the figures are medians.

    .venv/bin/python bench/research_rounds.py --base /work/wt/base38 [--questions 12] [--repeat 3]

A worker (``--worker``) runs the questions in the interpreter that runs it (after one run
that warms it up) and prints one JSON line per run: seconds outside the model, and rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "extraction_corpus" / "pages"
QUESTIONS = [
    "Why did Kelsby keep its harbour swing bridge?",
    "What did three years of sourdough baking teach the author?",
    "How is the cache layer configured?",
    "How do you make red lentil soup with smoked paprika?",
    "How many otters did the Lune survey find?",
    "How does a tide mill work?",
    "What will the Northfield Library repair café offer?",
    "Why are night trains coming back?",
    "What is unusual about the Brightwell kettle?",
    "How can you protect your focus at work?",
    "What does no-till farming do to earthworms?",
    "Why will the council switch off street lights?",
]
GAPS = {  # the second round of each run searches this
    0: "Kelsby swing bridge vote",
    1: "sourdough starter temperature",
    2: "cache backend several workers",
    3: "red lentil soup",
    4: "otter count Lune began",
    5: "tide mills Europe",
    6: "repair café funded",
    7: "night trains",
    8: "Brightwell kettle litre",
    9: "focus at work",
    10: "earthworm study farms",
    11: "street light plan save",
}


def worker(questions: int) -> None:
    """Run the questions here; one JSON line per run."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_ollama import ChatOllama

    from local2.config import load_settings
    from local2.service.research import Research
    from local2.testing.ollama_server import FakeOllama
    from local2.testing.research_brain import ResearchBrain
    from local2.testing.research_web import LoopbackWeb, load_pages, research_overrides

    # bench/research.py's own, written again: this runs in the other tree too, whose
    # bench/research.py may not import here.
    class ModelTimer(BaseCallbackHandler):
        def __init__(self) -> None:
            self.started: dict[Any, float] = {}
            self.total = 0.0

        def on_chat_model_start(
            self, serialized: Any, messages: Any, *, run_id: Any, **kw: Any
        ) -> None:
            self.started[run_id] = time.perf_counter()

        def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
            self.total += time.perf_counter() - self.started.pop(run_id, time.perf_counter())

    pages = load_pages(CORPUS)
    for i in range(-1, questions):  # the first run warms the process up: not counted
        n = i % len(QUESTIONS)
        brain = ResearchBrain(gaps=[[GAPS[n]], []])
        with (
            FakeOllama(brain) as fake,
            LoopbackWeb(pages) as web,
            tempfile.TemporaryDirectory() as d,
        ):
            overrides = research_overrides(web, Path(d))
            overrides["system"]["ollama_host"] = fake.url
            overrides["memory"] = {"enabled": False}
            overrides["research"].update(max_rounds=2)
            timer = ModelTimer()
            model = ChatOllama(model="qwen3:4b", base_url=fake.url, callbacks=[timer])
            run = Research(
                load_settings(overrides=overrides),
                chat_model=model,
                backend="ollama",
                memory=None,
                critic=None,
            )
            began = time.perf_counter()
            payload = run.run(QUESTIONS[n])
            wall = time.perf_counter() - began
            run.close()
        rounds = max(1, len(payload["rounds"]))
        if i < 0:
            continue
        print(json.dumps({"outside_s": wall - timer.total, "rounds": rounds, "q": n}), flush=True)


def run_tree(python: str, questions: int) -> list[dict[str, Any]]:
    out = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", "--questions", str(questions)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", type=Path, help="the other tree (its .venv runs it)")
    args = parser.parse_args()
    if args.worker:
        worker(args.questions)
        return
    if args.base is None:
        parser.error("--base TREE is needed (the tree to compare with)")
    trees = {"this tree": sys.executable, "base": str(args.base / ".venv" / "bin" / "python")}
    per_round: dict[str, list[float]] = {name: [] for name in trees}
    for r in range(args.repeat):
        for name, python in trees.items():
            for row in run_tree(python, args.questions):
                per_round[name].append(1000 * row["outside_s"] / row["rounds"])
            print(f"  repeat {r + 1}/{args.repeat}: {name} done", file=sys.stderr)
    ours, base = per_round["this tree"], per_round["base"]
    print("| tree | runs | ms outside the model per round (median) | mean |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in per_round.items():
        print(
            f"| {name} | {len(values)} | {statistics.median(values):.1f} | "
            f"{statistics.fmean(values):.1f} |"
        )
    ratio = statistics.median(ours) / statistics.median(base)
    mean_ratio = statistics.fmean(ours) / statistics.fmean(base)
    print(f"\nthis tree / base: {ratio:.3f} (median), {mean_ratio:.3f} (mean); target <= 1.05")


if __name__ == "__main__":
    main()
