"""How long a person waits for the embedded model's answer: the repetition guard and the
demo token cap, against the old settings, in the same run (issue 15).

The shipped SmolLM2-135M answers each prompt greedily (temperature 0, so both sides write
the same text until one of them stops). Baseline: no guard, ``max_tokens`` 384 (the old
default). LoCAL2: the guard on, ``max_tokens`` 256 (the new default). The prompts are the
ones whose real outputs are kept in ``tests/fixtures/embedded`` (five loop, four do not).

    .venv/bin/python bench/embedded_loops.py
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from langchain_core.messages import HumanMessage

from local2.models._embedded import REPETITION_NOTE, EmbeddedChatModel

CASES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "embedded"


def run(model: EmbeddedChatModel, prompt: str) -> tuple[float, int, bool]:
    """Seconds to the end of the answer, pieces streamed, and whether the guard stopped it."""
    model.load().reset()  # no prompt reuse from the previous run: both sides start cold
    started = time.perf_counter()
    pieces, text = 0, ""
    for chunk in model.stream([HumanMessage(prompt)]):
        if chunk.content:
            pieces += 1
            text += str(chunk.content)
    return time.perf_counter() - started, pieces, text.endswith(REPETITION_NOTE)


def median_run(
    model: EmbeddedChatModel, prompt: str, times: list[float]
) -> tuple[float, int, bool]:
    seconds, pieces, stopped = run(model, prompt)
    times.append(seconds)
    return statistics.median(times), pieces, stopped


def main(rounds: int = 3) -> None:
    cases = json.loads((CASES / "smollm2_outputs.json").read_text())
    old = EmbeddedChatModel(max_tokens=384, temperature=0.0, repetition_guard=False)
    new = EmbeddedChatModel(max_tokens=256, temperature=0.0)
    new.load()  # loaded once for both (same file, same settings)
    print(f"median of {rounds} runs each, the two sides alternating (the machine is shared)\n")
    print("| prompt | loops | baseline s | baseline pieces | LoCAL2 s | LoCAL2 pieces | stopped |")
    print("|---|---|---:|---:|---:|---:|---|")
    rows = []
    for case in cases:
        base_times: list[float] = []
        new_times: list[float] = []
        for i in range(rounds):
            sides = [(old, base_times), (new, new_times)]
            for model, times in sides if i % 2 == 0 else reversed(sides):
                result = median_run(model, case["prompt"], times)
                if model is old:
                    base = result
                else:
                    mine = result
        rows.append((case, base, mine))
        print(
            f"| {case['prompt']} | {'yes' if case['loops'] else 'no'} | {base[0]:.1f} | "
            f"{base[1]} | {mine[0]:.1f} | {mine[1]} | {'guard' if mine[2] else '-'} |"
        )
    for label, keep in (("looping", True), ("not looping", False)):
        chosen = [(b, m) for c, b, m in rows if c["loops"] == keep]
        ratio = sum(m[0] for _, m in chosen) / sum(b[0] for b, _ in chosen)
        worst = max(m[0] for _, m in chosen)
        print(
            f"\n{label}: LoCAL2 / baseline time {ratio:.2f}x; longest LoCAL2 wait {worst:.1f} s; "
            f"median pieces {statistics.median(m[1] for _, m in chosen):.0f} vs "
            f"{statistics.median(b[1] for b, _ in chosen):.0f}",
            end="",
        )
    print()


if __name__ == "__main__":
    main()
