"""What a compare turn costs a person: time to the answers and to the judge's verdict, against
the baseline of asking the two models one after the other, in the same run (issue 17).

Both sides run the real agent (ChatOllama, SQLite checkpoints, memory, the critic) against
the Ollama-protocol test server, whose every reply takes ``--delay`` seconds (a model's
latency). Each respondent searches the web once and answers (two model calls), the judge
grades each answer and compares them in both orders. Baseline: the same question asked
as two plain turns, model A then model B, each graded by the critic - what a person did
before compare turns, without the relative verdict. Ollama serves requests to different
models in parallel when memory allows (``OLLAMA_MAX_LOADED_MODELS``); so does the test
server.

    .venv/bin/python bench/compare.py [--delay 0.5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.brains import ModelBrains
from local2_testkit.ollama_server import FakeOllama, RuleBrain

A, B = "qwen3:4b", "rules:2b"
QUESTION = "What major AI news broke this week?"


def agent_for(url: str, model: str) -> Agent:
    settings = load_settings(
        overrides={
            "system": {"ollama_host": url, "data_dir": tempfile.mkdtemp(prefix="bench-cmp-")},
            "generator": {"backend": "ollama", "model": model},
            "web": {"search": {"provider": "mock"}},
        }
    )
    return Agent(settings, backend="ollama", model=model)


def timed(agent: Agent, session: str, **options: Any) -> tuple[float, float]:
    """Seconds to the (last) answer published and to the end of the turn (critic done)."""
    started = time.perf_counter()
    answered: list[float] = []

    def on_item(kind: str, data: Any) -> None:
        if kind == "answer":
            answered.append(time.perf_counter() - started)

    agent.turns.ask(QUESTION, session, on_item, options=options or None)
    return answered[-1], time.perf_counter() - started


def main(delay: float, rounds: int) -> None:
    brains = ModelBrains({A: RuleBrain(), B: RuleBrain()})
    with FakeOllama(brains, models=[A, B, "nomic-embed-text"], delay_s=delay) as server:
        agent_a, agent_b = agent_for(server.url, A), agent_for(server.url, B)
        compare: list[tuple[float, float]] = []
        baseline: list[tuple[float, float]] = []
        calls: dict[str, int] = {}
        for n in range(rounds):
            before = len(server.chat_requests)
            compare.append(timed(agent_a, f"c{n}", compare={"model": B}))
            calls["compare"] = len(server.chat_requests) - before
            before = len(server.chat_requests)
            one_a = timed(agent_a, f"a{n}")
            one_b = timed(agent_b, f"b{n}")
            baseline.append((one_a[1] + one_b[0], one_a[1] + one_b[1]))
            calls["baseline"] = len(server.chat_requests) - before
        agent_a.close()
        agent_b.close()

    def median(rows: list[tuple[float, float]], i: int) -> float:
        return statistics.median(r[i] for r in rows)

    print(f"model reply delay {delay:g} s, {rounds} rounds, medians\n")
    print("| way | model calls | both answers out | turn over (graded) |")
    print("|---|---:|---:|---:|")
    print(
        f"| two plain turns, A then B | {calls['baseline']} | {median(baseline, 0):.2f} s | "
        f"{median(baseline, 1):.2f} s |"
    )
    print(
        f"| one compare turn (+ pairwise verdict) | {calls['compare']} | "
        f"{median(compare, 0):.2f} s | {median(compare, 1):.2f} s |"
    )
    print(
        f"\ncompare / baseline: answers {median(compare, 0) / median(baseline, 0):.2f}x, "
        f"turn over {median(compare, 1) / median(baseline, 1):.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    main(args.delay, args.rounds)
