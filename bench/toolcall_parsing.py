"""Benchmark: how well text tool calls of small models are parsed (issue 8).

Reads the raw outputs in tests/fixtures/toolcalls/ (one YAML file per model family) and
prints, per family, the parse rate (a call was found), the correct-call rate (exactly the
expected calls and leftover text) and false calls on prose that holds no call, as a
Markdown table. Targets: >= 95% correct per family, 0 false calls.

The baseline, measured in the same run, is the parser many agent loops ship: Hermes
``<tool_call>{json}</tool_call>`` tags, or the whole reply as one JSON object. Its column
counts cases whose calls (not leftover text) are exactly right.

    .venv/bin/python bench/toolcall_parsing.py [--fixtures DIR] [--show-failures]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from local2.config import load_settings
from local2.models import parse_tool_calls

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "toolcalls"

# The built-in tools with the parameter schemas of the shipped generator.yaml.
BUILT_IN = ("web_search", "web_fetch", "recall_memory", "save_memory")
TOOLS: dict[str, dict[str, Any]] = {
    t.name: t.parameters for t in load_settings().generator.tools if t.name in BUILT_IN
}


def load_cases(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Family name (the file stem) -> its cases."""
    return {p.stem: yaml.safe_load(p.read_text("utf-8")) for p in sorted(folder.glob("*.yaml"))}


def _expected(case: dict[str, Any]) -> list[tuple[str, dict]]:
    return [(c["name"], c["args"]) for c in case.get("calls") or []]


_HERMES = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def baseline_parse(text: str) -> list[tuple[str, dict]]:
    """Hermes tags or a bare JSON object naming a known tool; nothing else."""
    chunks = _HERMES.findall(text) or [text]
    calls = []
    for chunk in chunks:
        try:
            data = json.loads(chunk.strip())
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("name") in TOOLS:
            args = data.get("arguments", data.get("parameters", {}))
            if isinstance(args, dict):
                calls.append((data["name"], args))
    return calls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=Path, default=FIXTURES)
    ap.add_argument("--show-failures", action="store_true")
    opts = ap.parse_args(argv)

    rows, failures, ok = [], [], True
    total_time, total_cases = 0.0, 0
    for family, cases in load_cases(opts.fixtures).items():
        if family == "errors":
            continue
        no_call = family == "no_call"
        parsed = correct = false_calls = base_correct = base_false = 0
        for case in cases:
            t0 = time.perf_counter()
            got = parse_tool_calls(case["text"], TOOLS)
            total_time += time.perf_counter() - t0
            total_cases += 1
            calls = [(c["name"], c["args"]) for c in got.calls]
            base = baseline_parse(case["text"])
            base_correct += base == _expected(case)
            base_false += bool(no_call and base)
            want_text = case["text"].strip() if no_call else case.get("leftover", "")
            parsed += bool(calls)
            false_calls += bool(no_call and (calls or got.errors))
            good = calls == _expected(case) and got.text == want_text and not got.errors
            correct += good
            if not good:
                failures.append((family, case["text"], calls, got.text, got.errors))
        n = len(cases)
        rate = correct / n
        ok &= (false_calls == 0) if no_call else rate >= 0.95
        rows.append(
            f"| {family} | {n} | {'-' if no_call else f'{parsed / n:.0%}'} "
            f"| {rate:.0%} | {false_calls if no_call else '-'} "
            f"| {base_correct / n:.0%} | {base_false if no_call else '-'} |"
        )
    print(
        "| family | cases | parse rate | correct | false calls | baseline correct | "
        "baseline false calls |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\n{total_cases} cases, {1000 * total_time / max(total_cases, 1):.2f} ms per parse")
    if opts.show_failures:
        for family, text, calls, left, errors in failures:
            print(f"\n[{family}] {text!r}\n  calls={calls}\n  text={left!r}\n  errors={errors}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
