"""What MCP adds to a chat turn: the ``ask`` tool through LoCAL2's MCP server, over stdio
(``local2 mcp``) and over streamable HTTP (``/mcp`` on ``local2 serve``), against the same
turn through ``POST /query``, in one run.

Two real processes with the same settings (each its own data directory): ``local2 serve
--no-ui`` (``POST /query`` and ``/mcp``) and ``local2 mcp`` (started by the MCP SDK's stdio
client). The model is the Ollama-protocol test server answering at once with one short
sentence; the critic and memory are off, so what is timed is the path a turn takes outside
the model. Each path asks in a session of its own, ``--turns`` times, the three taking turns
in a rotating order (so all see the same minutes of this shared machine); the first
``--warmup`` turns of each are not timed. Timed at the client: request sent to answer read
(the MCP SDK's ``ClientSession.call_tool``; httpx for ``/query``).

    .venv/bin/python bench/mcp_overhead.py [--turns 60] [--warmup 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/kit/mcp_clients.py

from tests.kit.mcp_clients import http_session, stdio_session, write_config

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.serve_process import ServeProcess

ANSWER = "Kelsby is a market town on the river Wend."
TARGET_MS = 15.0


def config(base: Path, name: str, ollama: str) -> Path:
    overrides: dict[str, dict[str, Any]] = {
        "system": {"data_dir": str(base / name / "data"), "ollama_host": ollama},
        "generator": {"backend": "ollama"},
        "critic": {"enabled": False},
        "memory": {"enabled": False},
    }
    return write_config(base / name / "config", overrides)


Ask = Callable[[str], Awaitable[str]]


async def measure(paths: dict[str, Ask], turns: int, warmup: int) -> dict[str, list[float]]:
    """Each path asked ``turns`` times in a rotating order; milliseconds per timed turn."""
    times: dict[str, list[float]] = {name: [] for name in paths}
    names = list(paths)
    for n in range(turns + warmup):
        order = names[n % len(names) :] + names[: n % len(names)]
        for name in order:
            started = time.perf_counter()
            answer = await paths[name](f"Where is Kelsby? ({n})")
            took = (time.perf_counter() - started) * 1000
            if answer != ANSWER:
                raise RuntimeError(f"{name} answered {answer!r}")
            if n >= warmup:
                times[name].append(took)
    return times


async def run(turns: int, warmup: int, base: Path, ollama: str) -> dict[str, list[float]]:
    served = ServeProcess(config(base, "serve", ollama), cold=True).start()
    try:
        async with (
            httpx.AsyncClient(base_url=served.url, timeout=60) as api,
            http_session(f"{served.url}/mcp") as over_http,
            stdio_session(config(base, "stdio", ollama)) as over_stdio,
        ):

            async def query(question: str) -> str:
                body = {"query": question, "session_id": "bench-query"}
                answered = (await api.post("/query", json=body)).json()
                return str(answered["answer"])

            def tool(session: Any, session_id: str) -> Ask:
                async def ask(question: str) -> str:
                    args = {"question": question, "session_id": session_id}
                    result = await session.call_tool("ask", args)
                    return str(result.structured_content["answer"])

                return ask

            paths: dict[str, Ask] = {
                "POST /query": query,
                "MCP streamable HTTP": tool(over_http, "bench-mcp-http"),
                "MCP stdio": tool(over_stdio, "bench-mcp-stdio"),
            }
            return await measure(paths, turns, warmup)
    finally:
        served.stop()


def table(times: dict[str, list[float]]) -> str:
    base = statistics.median(times["POST /query"])
    rows = [
        "| path | turns | median ms | p90 ms | added at the median | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, took in times.items():
        median = statistics.median(took)
        p90 = statistics.quantiles(took, n=10)[-1]
        added = median - base
        rows.append(
            f"| {name} | {len(took)} | {median:.1f} | {p90:.1f} | "
            f"{added:+.1f} ms | {median / base:.2f} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", type=Path, help="Also write the times here.")
    args = parser.parse_args()
    with FakeOllama(lambda request: ANSWER) as fake, tempfile.TemporaryDirectory() as tmp:
        times = anyio.run(run, args.turns, args.warmup, Path(tmp), fake.url)
    print(table(times))
    base = statistics.median(times["POST /query"])
    worst = max(statistics.median(t) - base for t in times.values())
    verdict = "within" if worst <= TARGET_MS else "over"
    said = f"MCP adds at most {worst:.1f} ms at the median: {verdict} the {TARGET_MS:.0f} ms"
    print(f"\n{said} target")
    if args.json:
        args.json.write_text(json.dumps(times))


if __name__ == "__main__":
    main()
