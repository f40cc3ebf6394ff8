"""Does a long conversation cost more per turn? LoCAL2's graph against plain MessagesState.

Runs N turns (default 300) of ~1 KB answers from a scripted model through
(a) LoCAL2's graph with the SQLite checkpointer and its append-only turn log, and
(b) the baseline: a one-node ``MessagesState`` graph with ``SqliteSaver``, same content,
in the same process, one after the other. Reports ms per turn and stored bytes per turn at
turns 1-10 and N-10..N, the total database size, and the ratios the targets are stated in.

    .venv/bin/python bench/history_growth.py [--turns 300]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from local2.agent import Agent
from local2.config import load_settings
from local2.models.scripted import ScriptedChatModel

ANSWER = ("LoCAL2 keeps history as an append-only log. " * 24)[:1000]


def stored_bytes(db: Path) -> int:
    """Bytes of every row's payload in the database (checkpoints, writes, turn log)."""
    conn = sqlite3.connect(db)
    total = 0
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        expr = " + ".join(f"COALESCE(length({c}), 0)" for c in cols)
        total += conn.execute(f"SELECT COALESCE(SUM({expr}), 0) FROM {table}").fetchone()[0]
    conn.close()
    return total


def file_size(db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-*"))


def measure(turns: int, run_turn: Callable[[int], None], db: Path) -> tuple[list[float], list[int]]:
    ms: list[float] = []
    grown: list[int] = []
    before = stored_bytes(db) if db.exists() else 0
    for i in range(turns):
        started = time.perf_counter()
        run_turn(i)
        ms.append((time.perf_counter() - started) * 1000)
        after = stored_bytes(db)
        grown.append(after - before)
        before = after
    return ms, grown


def local2_run(workdir: Path, turns: int) -> tuple[list[float], list[int], int]:
    db = workdir / "local2.sqlite"
    settings = load_settings(
        overrides={"system": {"data_dir": str(workdir), "checkpoint_path": str(db)}}
    )
    model = ScriptedChatModel(replies=[AIMessage(ANSWER)], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    ms, grown = measure(turns, lambda i: agent.ask(f"Question number {i}?", "bench"), db)
    agent.close()
    return ms, grown, file_size(db)


def baseline_run(workdir: Path, turns: int) -> tuple[list[float], list[int], int]:
    db = workdir / "baseline.sqlite"
    saver = SqliteSaver(sqlite3.connect(str(db), check_same_thread=False))
    saver.setup()

    def answer(state: MessagesState) -> dict:
        return {"messages": [AIMessage(ANSWER)]}

    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    app = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "bench"}}
    ms, grown = measure(
        turns,
        lambda i: app.invoke({"messages": [("user", f"Question number {i}?")]}, config),
        db,
    )
    saver.conn.close()
    return ms, grown, file_size(db)


def window_stats(values: list[float], start: int, end: int) -> float:
    return statistics.median(values[start:end])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    n = args.turns
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = {
            "LoCAL2": local2_run(work, n),
            "MessagesState + SqliteSaver": baseline_run(work, n),
        }

    early, late = (0, 10), (n - 10, n)
    print(f"{n} turns of ~1 KB answers, scripted model, SQLite checkpointer.\n")
    print(
        "| graph | ms/turn 1-10 | ms/turn last 10 | ratio | bytes/turn 1-10 | "
        "bytes/turn last 10 | ratio | database |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (ms, grown, size) in results.items():
        ms_e, ms_l = window_stats(ms, *early), window_stats(ms, *late)
        b_e, b_l = window_stats(grown, *early), window_stats(grown, *late)
        print(
            f"| {name} | {ms_e:.1f} | {ms_l:.1f} | {ms_l / ms_e:.2f}x | {b_e:,.0f} | "
            f"{b_l:,.0f} | {b_l / b_e:.2f}x | {size / 1e6:.2f} MB |"
        )
    ours, base = results["LoCAL2"], results["MessagesState + SqliteSaver"]
    db_ratio = ours[2] / base[2]
    ms_ratio = window_stats(ours[0], *late) / window_stats(ours[0], 0, 10)
    bytes_ratio = window_stats(ours[1], *late) / window_stats(ours[1], 0, 10)
    print(f"\nDatabase size, LoCAL2 / baseline: {db_ratio:.3f} (target <= 0.05)")
    print(
        f"LoCAL2 last-10 / first-10: ms {ms_ratio:.2f}x, bytes {bytes_ratio:.2f}x (targets <= 1.5x)"
    )
    met = db_ratio <= 0.05 and ms_ratio <= 1.5 and bytes_ratio <= 1.5
    print("targets met" if met else "TARGETS MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
