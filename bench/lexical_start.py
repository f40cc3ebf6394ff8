"""A process's first search of a 1,000-file folder: what reading the BM25 side costs at
start, and after another process changed a few files, this tree against another.

The folder is made in this run: 1,000 Markdown notes of the public HotpotQA paragraphs
(``bench/public/data/beir_hotpot_500``: 4,858 real Wikipedia paragraphs, about five a note,
2,692 chunks), indexed once per tree by ``FileIndex`` with the lexical embedder (no model:
the figures are the index's bookkeeping, not the embedding). Then, in a fresh process for
each measurement (``--repeat`` of them per tree, the trees taking turns):

- **open**: ``FileIndex(settings)`` over the built index;
- **first search**: its first ``search`` (the BM25 side read, its matrix built);
- **warm search**: the median of five more;
- **after a change elsewhere**: another ``FileIndex`` (another process, as ``local2 index``
  beside ``local2 serve``) rewrites 10 notes and syncs; the first one's next search.

``--against DIR`` names the other tree (a worktree of the code before); its ``src`` is put
first on the path of its processes. Each tree gets its own copy of the folder and index.
``--server``: the indexes live on a Chroma server (``chroma run`` on loopback, started for
the run), as a team's do.

    .venv/bin/python bench/lexical_start.py --against /tmp/lexical-before --repeat 5
    .venv/bin/python bench/lexical_start.py --against /tmp/lexical-before --repeat 5 --server
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SET = HERE / "public" / "data" / "beir_hotpot_500"
FILES = 1000
CHANGED = 10
CHROMA = ""  # the Chroma server's URL (--server), given to the measuring processes
QUERIES = (
    "Which river flows through the old mill town?",
    "the band's first studio album",
    "American actor born in 1950",
    "football club founded in the city",
    "novel written by the author",
    "the battle fought in the war",
)


def make_folder(notes: Path) -> None:
    """1,000 notes, each about five of the set's paragraphs under their titles."""
    sys.path.insert(0, str(HERE / "public"))
    from load import load_beir

    corpus, _, _ = load_beir(SET)
    docs = list(corpus.values())
    per = len(docs) // FILES
    notes.mkdir(parents=True, exist_ok=True)
    for n in range(FILES):
        body = "\n\n".join(f"## {d['title']}\n\n{d['text']}" for d in docs[n * per : (n + 1) * per])
        (notes / f"note-{n:04d}.md").write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")


def settings_for(base: Path) -> Any:
    """The index of ``base``'s notes: in ``base/data``, or on the server --server started."""
    from local2.config import load_settings

    server = os.environ.get("LEXICAL_START_CHROMA", "")
    files = {"roots": [str(base / "notes")], "embedder": "lexical"}
    return load_settings(
        overrides={
            "system": {"data_dir": str(base / "data")},
            "files": {**files, "index_collection": f"files-{base.name}"},
            "memory": {"embedder": "lexical", "chroma_url": server or None},
        }
    )


def build(base: Path) -> dict[str, Any]:
    from local2.files import FileIndex

    if not (base / "notes").exists():
        make_folder(base / "notes")
    started = time.perf_counter()
    report = FileIndex(settings_for(base)).sync()
    return {"files": report.files, "chunks": report.chunks, "s": time.perf_counter() - started}


def measure(base: Path, round_: int) -> dict[str, float]:
    """One process's start: open, first search, warm search, the search after a change."""
    from local2.files import FileIndex

    settings = settings_for(base)
    started = time.perf_counter()
    reader = FileIndex(settings)
    opened = time.perf_counter()
    assert reader.search(QUERIES[0], 5)
    first = time.perf_counter()
    warm = []
    for query in QUERIES[1:]:
        started_warm = time.perf_counter()
        reader.search(query, 5)
        warm.append(time.perf_counter() - started_warm)
    writer = FileIndex(settings)  # another process
    for n in range(CHANGED):
        note = base / "notes" / f"note-{(round_ * CHANGED + n) % FILES:04d}.md"
        note.write_text(note.read_text(encoding="utf-8") + f"\nSeen again in round {round_}.\n")
    assert writer.sync().updated == CHANGED
    before = time.perf_counter()
    reader.search(QUERIES[0], 5)
    after = time.perf_counter()
    return {
        "open ms": (opened - started) * 1000,
        "first search ms": (first - opened) * 1000,
        "warm search ms": statistics.median(warm) * 1000,
        "search after a change ms": (after - before) * 1000,
    }


def child(tree: Path, *args: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree / 'testkit' / 'src'}",
        "LEXICAL_START_CHROMA": CHROMA,
    }
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def run(args: argparse.Namespace) -> None:
    global CHROMA
    if args.server:
        from local2_testkit.chroma_server import TempChroma

        server = TempChroma().start()  # stopped at exit
        CHROMA = server.url
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="lexical-start-"))
    trees = {"this tree": HERE.parent}
    if args.against:
        trees["before"] = Path(args.against).resolve()
    for name, tree in trees.items():
        built = child(tree, "--child", "build", "--base", str(base / name.replace(" ", "-")))
        print(
            f"{name}: {built['files']} files, {built['chunks']} chunks, built in {built['s']:.1f} s"
        )
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_ in range(args.repeat):
        order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
        for name, tree in order:
            where = str(base / name.replace(" ", "-"))
            results[name].append(
                child(tree, "--child", "measure", "--base", where, "--round", str(round_))
            )
    keys = list(next(iter(results.values()))[0])
    print(f"\nmedian of {args.repeat} processes per tree\n")
    print("| tree | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    medians = {
        n: {k: statistics.median(r[k] for r in rs) for k in keys} for n, rs in results.items()
    }
    for name, m in medians.items():
        print(f"| {name} | " + " | ".join(f"{m[k]:.1f}" for k in keys) + " |")
    if "before" in medians:
        ratios = [medians["before"][k] / medians["this tree"][k] for k in keys]
        print("| before / this tree | " + " | ".join(f"{r:.1f}x" for r in ratios) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="another tree (a worktree of the code before)")
    parser.add_argument("--repeat", type=int, default=5, help="processes per tree")
    parser.add_argument("--keep", help="keep the folders and indexes in this directory")
    parser.add_argument("--server", action="store_true", help="the indexes on a Chroma server")
    parser.add_argument("--child", choices=["build", "measure"], help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "build":
        print(json.dumps(build(Path(args.base))))
    elif args.child == "measure":
        print(json.dumps(measure(Path(args.base), args.round)))
    else:
        run(args)


if __name__ == "__main__":
    main()
