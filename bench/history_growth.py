"""Does a long conversation cost more per turn? LoCAL2's graph against plain MessagesState.

Runs N turns (default 300) of ~1 KB answers (different words at every turn) from a
scripted model through
(a) LoCAL2's graph with its checkpointer and append-only turn log, and
(b) the baseline: a one-node ``MessagesState`` graph with LangGraph's saver, same content,
in the same process, one after the other — on SQLite (a file) and on Postgres (a throwaway
cluster from Debian's package, fsync on, started by the benchmark). Reports ms per turn and
stored bytes per turn at turns 1-10 and N-10..N, the total size, and the target ratios.

    .venv/bin/python bench/history_growth.py [--turns 300] [--engines sqlite,postgres]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

from local2.config import load_settings
from local2.models import ScriptedChatModel
from local2.service.agent import Agent

_RNG = random.Random(2)
VOCABULARY = [
    "".join(_RNG.choice(string.ascii_lowercase) for _ in range(_RNG.randint(2, 9)))
    for _ in range(800)
]


def answer_text(turn: int) -> str:
    """~1 KB of text-like words, different at every turn: identical answers would let a
    compressing store (Postgres compresses large values) fold the whole history into one."""
    rng = random.Random(turn)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < 1000:
        words.append(rng.choice(VOCABULARY))
    return " ".join(words)[:1000]


class SqliteDb:
    """One SQLite file: what LoCAL2 or the baseline stored in it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def overrides(self) -> dict[str, Any]:
        return {"checkpointer": "sqlite", "checkpoint_path": str(self.path)}

    def saver(self) -> Any:
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sqlite3.connect(str(self.path), check_same_thread=False))
        saver.setup()
        return saver

    def stored_bytes(self) -> int:
        """Bytes of every row's payload (checkpoints, writes, turn log)."""
        if not self.path.exists():
            return 0
        conn = sqlite3.connect(self.path)
        total = 0
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            expr = " + ".join(f"COALESCE(length({c}), 0)" for c in cols)
            total += conn.execute(f"SELECT COALESCE(SUM({expr}), 0) FROM {table}").fetchone()[0]
        conn.close()
        return total

    def size(self) -> int:
        conn = sqlite3.connect(self.path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        extra = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "-*"))
        return self.path.stat().st_size + extra


class PostgresDb:
    """One Postgres database: what LoCAL2 or the baseline stored in it."""

    def __init__(self, url: str) -> None:
        self.url = url

    def overrides(self) -> dict[str, Any]:
        return {"checkpointer": "postgres", "postgres_url": self.url}

    def saver(self) -> Any:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        conn = Connection.connect(
            self.url, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        saver = PostgresSaver(conn)
        saver.setup()
        return saver

    def stored_bytes(self) -> int:
        """Bytes of every column as stored (compressed when Postgres compressed it)."""
        import psycopg

        with psycopg.connect(self.url) as conn:
            columns = conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'public'"
            ).fetchall()
            total = 0
            for table in {t for t, _ in columns}:
                expr = " + ".join(
                    f'COALESCE(pg_column_size("{c}"), 0)' for t, c in columns if t == table
                )
                total += conn.execute(f"SELECT COALESCE(SUM({expr}), 0) FROM {table}").fetchone()[0]
        return int(total)

    def size(self) -> int:
        """Tables with their TOAST data and indexes (not the catalog every database has)."""
        import psycopg

        with psycopg.connect(self.url) as conn:
            return int(
                conn.execute(
                    "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = 'public' AND c.relkind = 'r'"
                ).fetchone()[0]
            )


def measure(turns: int, run_turn: Callable[[int], None], db: Any) -> tuple[list[float], list[int]]:
    ms: list[float] = []
    grown: list[int] = []
    before = db.stored_bytes()
    for i in range(turns):
        started = time.perf_counter()
        run_turn(i)
        ms.append((time.perf_counter() - started) * 1000)
        after = db.stored_bytes()
        grown.append(after - before)
        before = after
    return ms, grown


def local2_run(workdir: Path, db: Any, turns: int) -> tuple[list[float], list[int], int]:
    settings = load_settings(overrides={"system": {"data_dir": str(workdir), **db.overrides()}})
    replies = [AIMessage(answer_text(i)) for i in range(turns)]
    agent = Agent(
        settings, chat_model=ScriptedChatModel(replies=replies), tools=[], memory=None, critic=None
    )
    ms, grown = measure(turns, lambda i: agent.turns.ask(f"Question number {i}?", "bench"), db)
    agent.close()
    return ms, grown, db.size()


def baseline_run(db: Any, turns: int) -> tuple[list[float], list[int], int]:
    saver = db.saver()

    def answer(state: MessagesState) -> dict:
        return {"messages": [AIMessage(answer_text(len(state["messages"]) // 2))]}

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
    return ms, grown, db.size()


@contextmanager
def databases(engine: str, work: Path) -> Iterator[tuple[Any, Any]]:
    """A database for LoCAL2 and one for the baseline, on ``engine``."""
    if engine == "sqlite":
        yield SqliteDb(work / "local2.sqlite"), SqliteDb(work / "baseline.sqlite")
        return
    from local2_testkit.postgres import TempPostgres

    with TempPostgres(durable=True) as cluster:
        yield (
            PostgresDb(cluster.create_database("local2")),
            PostgresDb(cluster.create_database("baseline")),
        )


def median(values: list[float], start: int, end: int) -> float:
    return statistics.median(values[start:end])


def report(engine: str, n: int, results: dict[str, tuple[list[float], list[int], int]]) -> bool:
    early, late = (0, 10), (n - 10, n)
    print(f"\n{n} turns of ~1 KB answers, scripted model, {engine}.\n")
    print(
        "| graph | ms/turn 1-10 | ms/turn last 10 | ratio | bytes/turn 1-10 | "
        "bytes/turn last 10 | ratio | database |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (ms, grown, size) in results.items():
        ms_e, ms_l = median(ms, *early), median(ms, *late)
        b_e, b_l = median(grown, *early), median(grown, *late)
        print(
            f"| {name} | {ms_e:.1f} | {ms_l:.1f} | {ms_l / ms_e:.2f}x | {b_e:,.0f} | "
            f"{b_l:,.0f} | {b_l / b_e:.2f}x | {size / 1e6:.2f} MB |"
        )
    ours, base = results["LoCAL2"], results[f"MessagesState + {engine} saver"]
    db_ratio = ours[2] / base[2]
    ms_ratio = median(ours[0], *late) / median(ours[0], *early)
    bytes_ratio = median(ours[1], *late) / median(ours[1], *early)
    print(f"\nDatabase size, LoCAL2 / baseline: {db_ratio:.3f} (target <= 0.05)")
    print(
        f"LoCAL2 last-10 / first-10: ms {ms_ratio:.2f}x, bytes {bytes_ratio:.2f}x (targets <= 1.5x)"
    )
    met = db_ratio <= 0.05 and ms_ratio <= 1.5 and bytes_ratio <= 1.5
    print("targets met" if met else "TARGETS MISSED")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--engines", default="sqlite,postgres")
    args = parser.parse_args()
    all_met = True
    for engine in args.engines.split(","):
        with tempfile.TemporaryDirectory() as tmp, databases(engine, Path(tmp)) as (ours, base):
            results = {
                "LoCAL2": local2_run(Path(tmp), ours, args.turns),
                f"MessagesState + {engine} saver": baseline_run(base, args.turns),
            }
        all_met = report(engine, args.turns, results) and all_met
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
