"""Turns per second and latency as sessions grow: one process on SQLite + embedded Chroma
against two processes on Postgres + a Chroma server, in one run.

A model server speaking Ollama's protocol answers every chat after a fixed delay (default
0.5 s) and embeds instantly, so what is measured is LoCAL2 around the model: the graph, the
checkpointer, the turn log, memory ingest, the HTTP API. Each of S concurrent clients owns
one session and asks T turns in a row through ``POST /query``; with two processes the
client alternates between them turn by turn, as a round-robin reverse proxy would. The
critic is off (it would add a second model call per turn). Postgres is a throwaway cluster
from Debian's package (fsync on); the Chroma server is ``chroma run``; everything on
127.0.0.1, started and stopped here.

    .venv/bin/python bench/scale.py [--sessions 1,8,32] [--turns 4] [--delay 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from local2.testing.chroma_server import TempChroma
from local2.testing.ollama_server import FakeOllama, Reply
from local2.testing.postgres import TempPostgres
from local2.testing.serve_process import ServeProcess

ANSWER = "A fixed answer of a few sentences, long enough to look like a real reply. " * 4


def brain(request: dict[str, Any]) -> Reply:
    return Reply(content=ANSWER)


def config_dir(root: Path, ollama_url: str, *, postgres: bool, chroma_url: str | None) -> Path:
    root.mkdir(parents=True)
    system = f"ollama_host: {ollama_url}\ncheckpointer: {'postgres' if postgres else 'sqlite'}\n"
    (root / "system.yaml").write_text(system)
    (root / "generator.yaml").write_text("backend: ollama\n")
    memory = "embedder: ollama\n" + (f"chroma_url: {chroma_url}\n" if chroma_url else "")
    (root / "memory.yaml").write_text(memory)
    (root / "critic.yaml").write_text("enabled: false\n")
    return root


def run_load(urls: list[str], sessions: int, turns: int, tag: str) -> dict[str, float]:
    """S clients x T turns; returns turns/s and latency percentiles in ms."""
    latencies: list[float] = []

    def client(index: int) -> None:
        session = f"{tag}-{sessions}-{index}"
        with httpx.Client(timeout=300) as http:
            for turn in range(turns):
                url = urls[(index + turn) % len(urls)]
                started = time.perf_counter()
                response = http.post(
                    f"{url}/query", json={"query": f"Question {turn}?", "session_id": session}
                )
                latencies.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()

    started = time.perf_counter()
    with ThreadPoolExecutor(sessions) as pool:
        list(pool.map(client, range(sessions)))
    wall = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "turns_per_s": len(latencies) / wall,
        "p50": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,8,32")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    levels = [int(n) for n in args.sessions.split(",")]
    results: dict[str, dict[int, dict[str, float]]] = {}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        fake = stack.enter_context(FakeOllama(brain, delay_s=args.delay))
        postgres = stack.enter_context(TempPostgres(durable=True))
        chroma = stack.enter_context(TempChroma())
        setups = {
            "1 process, SQLite + embedded Chroma": (
                config_dir(tmp / "a", fake.url, postgres=False, chroma_url=None),
                {"LOCAL2_HOME": str(tmp / "a-home")},
                1,
            ),
            "2 processes, Postgres + Chroma server": (
                config_dir(tmp / "b", fake.url, postgres=True, chroma_url=chroma.url),
                {"LOCAL2_POSTGRES_URL": postgres.create_database("scale")},
                2,
            ),
        }
        for name, (conf, env, count) in setups.items():
            servers = [
                ServeProcess(conf, env={**env, "LOCAL2_HOME": str(tmp / f"{conf.name}-{i}")})
                for i in range(count)
            ]
            for server in servers:
                stack.callback(server.stop)
                server.launch()
            urls = [server.wait_ready().url for server in servers]
            run_load(urls, len(urls), 1, f"warm-{conf.name}")  # first turns load lazily
            results[name] = {}
            for sessions in levels:
                results[name][sessions] = run_load(urls, sessions, args.turns, conf.name)
                print(f"{name}, {sessions} sessions: {results[name][sessions]}", file=sys.stderr)
            for server in servers:
                server.stop()

    base_name = next(iter(results))
    print(
        f"\nModel reply delay {args.delay:.2f} s; {args.turns} turns per session; "
        "critic off; memory on.\n"
    )
    print("| setup | sessions | turns/s | p50 ms | p95 ms | turns/s vs 1 process |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, by_level in results.items():
        for sessions, r in by_level.items():
            ratio = r["turns_per_s"] / results[base_name][sessions]["turns_per_s"]
            print(
                f"| {name} | {sessions} | {r['turns_per_s']:.2f} | {r['p50']:.0f} | "
                f"{r['p95']:.0f} | {ratio:.2f}x |"
            )
    ideal = {s: s / args.delay for s in levels}
    print(
        "\nCeiling set by the model delay alone (sessions / delay): "
        + ", ".join(f"{s}: {v:.1f} turns/s" for s, v in ideal.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
