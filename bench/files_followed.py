"""Files followed: how many of the package's files a reader walks through to follow one chat
turn and one research run (issue 54: "opens at most half as many files as today").

Each tree runs in a fresh process of its own (this file, ``--worker``): the real ChatOllama
against the test kit's Ollama-protocol server, the real SQLite checkpointer, real Chroma
memory (the server's ``nomic-embed-text``), web search and fetch on a loopback web of
captured pages. A warm-up turn and run on another session first, so that what is counted is
the turn and the run, not the first imports. Then a profile hook on every thread
(``sys.setprofile`` and ``threading.setprofile``, set before anything starts a thread)
records, while the traced call runs and until the threads it started are idle again, each
Python call whose code is in ``src/local2`` and whose caller is in another file (or outside
the package): an entry into that file. Printed: the files entered, and the entries, per part
and tree; ``--show`` lists every file with its entries.

    .venv/bin/python bench/files_followed.py [--against ../base] [--show]

``--against TREE`` is another checkout (a worktree of main, say). It runs with the tree's own
``.venv`` when it has one, else with this interpreter, the tree's ``src`` and test kit first
on the path either way (the worker checks that ``local2`` was imported from that tree).
Printed beside the counts: the files entered per package, so what is left to merge shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve()
CORPUS = HERE.parent / "extraction_corpus" / "pages"
CHAT_QUESTION = "Search the web for the latest news: why did Kelsby keep its swing bridge?"
RESEARCH_QUESTION = "Why did Kelsby keep its harbour swing bridge?"
WARM_CHAT = "Search the web for the latest news: how does a tide mill work?"
WARM_RESEARCH = "How does a tide mill work?"


class Follower:
    """Counts entries into the package's files, on every thread, while ``on`` is set."""

    def __init__(self, root: Path) -> None:
        self.root = str(root) + os.sep
        self.on = False
        self.entries: Counter[str] = Counter()
        self._lock = threading.Lock()

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if not self.on or event != "call":
            return
        name = frame.f_code.co_filename
        if not name.startswith(self.root):
            return
        back = frame.f_back
        if back is not None and back.f_code.co_filename == name:
            return  # a call inside the file: the reader is still in it
        with self._lock:
            self.entries[name[len(self.root) :]] += 1

    def install(self) -> None:
        threading.setprofile(self.hook)  # type: ignore[arg-type]
        sys.setprofile(self.hook)  # type: ignore[arg-type]

    def follow(self, call: Any) -> tuple[Any, Counter[str]]:
        """Run ``call`` with the hook on, until it returns and the threads it woke are idle."""
        self.entries = Counter()
        self.on = True
        try:
            result = call()
            settle(self)
        finally:
            self.on = False
        return result, self.entries


def settle(follower: Follower, quiet_s: float = 1.0, most_s: float = 30.0) -> None:
    """Wait until no entry has been counted for ``quiet_s`` (background work after the call:
    memory saved, a grade given later), at most ``most_s``."""
    deadline = time.monotonic() + most_s
    seen = -1
    while time.monotonic() < deadline:
        now = sum(follower.entries.values())
        if now == seen:
            return
        seen = now
        time.sleep(quiet_s)


def worker(tree: Path) -> dict[str, dict[str, int]]:
    """One chat turn and one research run in this process; their entries per file."""
    package = tree / "src" / "local2"
    follower = Follower(package)
    follower.install()  # before any thread starts, so every thread has the hook

    from langchain_ollama import ChatOllama

    import local2
    from local2.config import load_settings
    from local2.service.agent import Agent
    from local2_testkit.ollama_server import FakeOllama, RuleBrain
    from local2_testkit.research_brain import ResearchBrain
    from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides

    if Path(local2.__file__).resolve().parent != package.resolve():
        raise SystemExit(f"local2 came from {local2.__file__}, not from {package}")
    with (
        FakeOllama(RuleBrain()) as fake,
        LoopbackWeb(load_pages(CORPUS)) as web,
        tempfile.TemporaryDirectory() as data,
    ):
        overrides: dict[str, Any] = research_overrides(web, Path(data))
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": True, "embedder": "ollama"}
        overrides["research"].update({"max_rounds": 1})
        settings = load_settings(overrides=overrides)
        model = ChatOllama(model="qwen3:4b", base_url=fake.url)
        agent = Agent(settings, chat_model=model, backend="ollama")
        try:
            agent.turns.ask(WARM_CHAT, "warm")
            settle(follower)
            fake.brain = ResearchBrain()
            agent.research.run(WARM_RESEARCH)
            settle(follower)

            fake.brain = RuleBrain()
            turn, chat = follower.follow(lambda: agent.turns.ask(CHAT_QUESTION, "followed"))
            if not turn["tool_calls"] or not turn["answer"]:
                raise SystemExit(f"the chat turn searched nothing or gave no answer: {turn}")
            fake.brain = ResearchBrain()
            payload, research = follower.follow(lambda: agent.research.run(RESEARCH_QUESTION))
            if payload["status"] != "done" or not payload["sources"]:
                raise SystemExit(f"the research run did not end with sources: {payload}")
        finally:
            agent.close()
    return {"chat": dict(chat), "research": dict(research)}


def run_tree(tree: Path) -> dict[str, dict[str, int]]:
    """The worker in a process of its own, with the tree's interpreter when it has one."""
    venv = tree / ".venv" / "bin" / "python"
    env = dict(os.environ)
    python = str(venv) if venv.exists() else sys.executable
    # The tree's own source first, whichever interpreter: a venv's editable install may
    # point at another checkout (the worker checks where local2 came from).
    paths = [str(tree / "src"), str(tree / "testkit" / "src")]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [python, str(HERE), "--worker", str(tree)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    result: dict[str, dict[str, int]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def by_package(name: str) -> str:
    """``graph/_turn.py`` -> ``graph``; a module at the package's root is the base."""
    return name.split("/")[0] if "/" in name else "(root)"


def commit(tree: Path) -> str:
    found = subprocess.run(
        ["git", "-C", str(tree), "describe", "--always", "--dirty", "--abbrev=7"],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    return found.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout to count beside this one")
    parser.add_argument("--show", action="store_true", help="list every file and its entries")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker.resolve())))
        return
    trees = {"this tree": HERE.parents[1]}
    if args.against:
        trees = {"against": args.against.resolve(), **trees}
    counted = {label: run_tree(tree) for label, tree in trees.items()}
    print("\n| tree | commit | chat: files | chat: entries | research: files | research: entries |")
    print("|---|---|---:|---:|---:|---:|")
    for label, parts in counted.items():
        cells = [label, f"`{commit(trees[label])}`"]
        for part in ("chat", "research"):
            cells += [str(len(parts[part])), str(sum(parts[part].values()))]
        print("| " + " | ".join(cells) + " |")
    if len(counted) == 2:
        before, after = counted.values()
        ratios = [
            f"{part} {len(after[part]) / len(before[part]):.2f}x" for part in ("chat", "research")
        ]
        print(f"\nfiles followed, this tree against the other: {', '.join(ratios)}")
    packages = sorted(
        {by_package(name) for parts in counted.values() for e in parts.values() for name in e}
    )
    print("\n| package | " + " | ".join(f"{label}: chat / research" for label in counted) + " |")
    print("|---|" + "---:|" * len(counted))
    for package in packages:
        cells = [
            " / ".join(str(sum(by_package(n) == package for n in parts[part])) for part in parts)
            for parts in counted.values()
        ]
        print(f"| {package} | " + " | ".join(cells) + " |")
    if args.show:
        for label, parts in counted.items():
            for part, entries in parts.items():
                print(f"\n### {label}, {part}: {len(entries)} files\n")
                for name, n in sorted(entries.items(), key=lambda kv: (-kv[1], kv[0])):
                    print(f"{n:6d}  {name}")


if __name__ == "__main__":
    main()
