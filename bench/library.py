"""Benchmark: the library of what was read (issue 46).

Part 1 (``--rounds N --repeat R``): what keeping a read page adds to a research round
outside the model. The same questions (two rounds each) run in this tree with
``library.keep: research`` and with ``keep: off``, and in the tree before (``--against``,
another checkout run with this venv), each in a process of its own (one warm-up run not
counted), in turns that swap every repeat; through the real ChatOllama against the
Ollama-protocol server, the searxng provider and web_fetch against the loopback web, SQLite
checkpoints, no critic or memory. The figure is wall time minus the time inside chat-model
calls, per round; the library indexes what was kept in a thread of its own, and what it
still had to index when the run ended is waited for after it and reported beside.

Part 2 (``--pages N``): a library of N kept pages (made-up pages of 1 to 3 kB, a tenth of
them 8-page PDFs' texts) searched: median and p95 of 60 queries; disk per kept page (the
entries, texts and originals, and the index's growth).

    .venv/bin/python bench/library.py --rounds 6 --repeat 6 --against /tmp/library-base
    .venv/bin/python bench/library.py --pages 5000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from research import CORPUS, QUESTIONS, ModelTimer  # noqa: E402  # the research bench's


def rounds_worker(n: int, keep: str | None) -> None:
    """Part 1's runs in this interpreter (this tree's or the other's): one JSON line per
    run, seconds outside the model and rounds. ``keep`` None: the settings know no library."""
    from langchain_ollama import ChatOllama

    from local2.config import load_settings
    from local2.service.research import Research
    from local2_testkit.ollama_server import FakeOllama
    from local2_testkit.research_brain import ResearchBrain
    from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides

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
            overrides = research_overrides(web, Path(d))
            overrides["system"]["ollama_host"] = fake.url
            overrides["memory"] = {"enabled": False}
            overrides["research"].update({"max_rounds": 2})
            if keep is not None:
                overrides["library"] = {"keep": keep}
            settings = load_settings(overrides=overrides)
            run = Research(settings, chat_model=model, backend="ollama", memory=None, critic=None)
            began = time.perf_counter()
            payload = run.run(QUESTIONS[q])
            wall = time.perf_counter() - began
            library = getattr(run, "library", None)
            settled = time.perf_counter()
            if library is not None:
                library.settle()  # the indexing left after the run, in its own thread
            after = time.perf_counter() - settled
            kept = len(library.entries("local")) if library is not None else 0
            run.close()
        if i >= 0:
            rounds = max(1, len(payload["rounds"]))
            line = {
                "outside_s": wall - timer.total,
                "rounds": rounds,
                "kept": kept,
                "after_s": after,
            }
            print(json.dumps(line), flush=True)


def rounds_against(tree: Path | None, n: int, repeat: int) -> None:
    """Part 1: ms outside the model per round; the ratio is the median of the repeats'
    paired ratios (a load that comes and goes falls on both alike)."""
    here = str(HERE.parent / "src")
    kit = str(HERE.parent / "testkit" / "src")
    arms: dict[str, tuple[str, str, str]] = {
        "this tree, keep: research": (here, kit, "research"),
        "this tree, keep: off": (here, kit, "off"),
    }
    if tree is not None:  # its own test kit: this tree's may use what it does not have
        arms[f"before ({tree})"] = (str(tree / "src"), str(tree / "testkit" / "src"), "")
    per_round: dict[str, list[float]] = {name: [] for name in arms}
    kept: dict[str, int] = dict.fromkeys(arms, 0)
    after: dict[str, list[float]] = {name: [] for name in arms}
    ratios: dict[str, list[float]] = {name: [] for name in list(arms)[1:]}
    for r in range(repeat):
        medians: dict[str, float] = {}
        for name in list(arms)[:: 1 if r % 2 == 0 else -1]:
            src, kit_src, keep = arms[name]
            env = {**os.environ, "PYTHONPATH": f"{src}:{kit_src}"}
            command = [sys.executable, __file__, "--rounds-worker", str(n), "--keep", keep]
            out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
            runs = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
            values = [1000 * run["outside_s"] / run["rounds"] for run in runs]
            per_round[name] += values
            kept[name] += sum(run["kept"] for run in runs)
            after[name] += [1000 * run.get("after_s", 0.0) for run in runs]
            medians[name] = statistics.median(values)
            print(f"  repeat {r + 1}/{repeat}: {name} {medians[name]:.1f} ms", file=sys.stderr)
        first = medians[next(iter(arms))]
        for name in ratios:
            ratios[name].append(first / medians[name])
    print(f"\n### A research round outside the model ({n} questions x {repeat}, two rounds)\n")
    print("| tree | runs | pages kept | ms per round (median) | mean | indexing left after a run |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, values in per_round.items():
        print(
            f"| {name} | {len(values)} | {kept[name]} | {statistics.median(values):.1f} | "
            f"{statistics.fmean(values):.1f} | {statistics.median(after[name]):.0f} ms |"
        )
    for name, values in ratios.items():
        print(
            f"\nkeep: research / {name}, repeat by repeat: median "
            f"{statistics.median(values):.3f} (from {min(values):.3f} to {max(values):.3f}); "
            "target <= 1.05"
        )


WORDS = [
    "harbour",
    "bridge",
    "tidal",
    "mill",
    "flour",
    "river",
    "council",
    "vote",
    "budget",
    "ferry",
    "lighthouse",
    "granary",
    "canal",
    "lock",
    "weir",
    "orchard",
    "cider",
    "quarry",
    "chapel",
    "market",
    "fair",
    "charter",
    "tithe",
    "barn",
    "moor",
    "heath",
    "estuary",
    "salt",
    "marsh",
    "oyster",
    "smack",
    "lifeboat",
    "pier",
    "promenade",
    "tram",
    "depot",
    "foundry",
    "kiln",
]


def made_up_page(rng: random.Random, n: int) -> str:
    sentences = []
    for s in range(rng.randint(12, 36)):
        words = rng.sample(WORDS, 7)
        sentences.append(
            f"The {words[0]} of Town{n} had {s + n % 97} {words[1]}s by the {words[2]}."
        )
    return " ".join(sentences)


def library_part(pages: int, embedder: str | None) -> None:
    """Part 2: a library of ``pages`` kept pages, searched; disk per kept page."""
    from local2.config import load_settings
    from local2.library import Fetched, Reader, ReadingLibrary

    rng = random.Random(46)
    with tempfile.TemporaryDirectory() as d:
        overrides: dict[str, Any] = {"system": {"data_dir": d}, "library": {"max_mb": 100000}}
        if embedder:
            overrides["files"] = {"embedder": embedder}
        settings = load_settings(overrides=overrides)
        library = ReadingLibrary(settings)
        began = time.perf_counter()
        for n in range(pages):
            url = f"http://site{n % 50}.example/page/{n}"
            if n % 10 == 0:
                texts = tuple((p, made_up_page(rng, n * 10 + p)) for p in range(1, 9))
                fetched = Fetched(
                    url + ".pdf",
                    url + ".pdf",
                    f"Report {n}",
                    "pdf",
                    texts,
                    b"%PDF-" + os.urandom(20000),
                )
            else:
                fetched = Fetched(url, url, f"Page {n}", "html", ((1, made_up_page(rng, n)),))
            library.keep(fetched, Reader("research", run_id=f"run{n // 8}"))
        library.settle()
        built = time.perf_counter() - began
        folder = library.shelf("local").folder
        own = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        index = sum(p.stat().st_size for p in (Path(d) / "file_index").rglob("*") if p.is_file())
        times = []
        for _ in range(60):
            words = rng.sample(WORDS, 3)
            query = f"how many {words[0]}s did Town{rng.randrange(pages)} have by the {words[1]}"
            t = time.perf_counter()
            library.search("local", query)
            times.append(1000 * (time.perf_counter() - t))
    times.sort()
    used = settings.files.embedder or settings.memory.embedder
    print(f"\n### A library of {pages} kept pages (embedder: {used})\n")
    print("| measure | value |")
    print("| --- | ---: |")
    print(f"| kept in | {built:.0f} s ({1000 * built / pages:.1f} ms a page) |")
    print(f"| search, median of 60 | {statistics.median(times):.1f} ms |")
    print(f"| search, p95 | {times[int(len(times) * 0.95)]:.1f} ms |")
    print(f"| disk per kept page: entries, texts, originals | {own / pages / 1024:.1f} kB |")
    print(f"| disk per kept page: the index | {index / pages / 1024:.1f} kB |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=0, help="part 1: questions per repeat")
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--against", type=Path, help="part 1: the tree before (its src/)")
    parser.add_argument("--pages", type=int, default=0, help="part 2: pages in the library")
    parser.add_argument("--embedder", help="part 2: files.embedder (default: as configured)")
    parser.add_argument("--rounds-worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--keep", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds_worker is not None:
        rounds_worker(args.rounds_worker, args.keep or None)
        return
    if args.rounds:
        rounds_against(args.against, args.rounds, args.repeat)
    if args.pages:
        library_part(args.pages, args.embedder)


if __name__ == "__main__":
    main()
