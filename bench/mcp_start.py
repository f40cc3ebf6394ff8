"""How long ``local2 mcp`` takes to answer its first ``tools/list``: what a host waits for
each time it starts the server (langchain-mcp-adapters starts one per tool call).

Each tree's installed ``local2`` is started as a host starts it (a fresh process, its data
directory and config in the environment, the model behind the Ollama-protocol test server),
then sent ``initialize``, ``notifications/initialized``, ``tools/list`` and a first
``tools/call`` at once; timed from the start to the ``tools/list`` answer on stdout, and to
the call's (what each of langchain-mcp-adapters' calls waits for). The trees take turns,
``--repeat`` times each, after one untimed start each (which makes the data directory).

    .venv/bin/python bench/mcp_start.py --against /tmp/base-53/.venv/bin/local2 [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from local2_testkit.ollama_server import FakeOllama

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "list_research_runs", "arguments": {}}},
]  # fmt: skip


def first_answers(local2: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``local2 mcp`` to its ``tools/list`` answer, and to its first
    tool call's (``list_research_runs``: the agent open, the store read)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [local2, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES))
    proc.stdin.flush()
    at: dict[int, float] = {}
    for line in proc.stdout:
        answer = json.loads(line)
        if answer.get("id") in (2, 3):
            at[answer["id"]] = time.perf_counter() - started
            assert not answer["result"].get("isError") and answer["result"], answer
        if len(at) == 2:
            break
    else:
        raise RuntimeError(f"{local2} mcp ended before answering the listing and the call")
    proc.stdin.close()
    proc.wait(timeout=60)
    return at[2], at[3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the baseline tree's local2")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    trees = {"this tree": str(Path(sys.executable).with_name("local2")), "baseline": args.against}
    with tempfile.TemporaryDirectory() as tmp, FakeOllama() as fake:
        config = Path(tmp) / "config"
        config.mkdir()
        (config / "generator.yaml").write_text(yaml.safe_dump({"backend": "ollama"}))
        envs = {
            name: {"PATH": "/usr/bin:/bin", "HOME": tmp, "LOCAL2_CONFIG": str(config),
                   "LOCAL2_HOME": str(Path(tmp) / name.replace(" ", "-")),
                   "OLLAMA_HOST": fake.url}
            for name in trees
        }  # fmt: skip
        for name, local2 in trees.items():
            first_answers(local2, envs[name])  # makes the data directory; not timed
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeat):
            for name, local2 in trees.items():
                listed, called = first_answers(local2, envs[name])
                times.setdefault(("tools/list", name), []).append(listed)
                times.setdefault(("first tools/call", name), []).append(called)
    print("| answer | tree | median s | min s | max s | ratio to baseline |")
    print("|---|---|---:|---:|---:|---:|")
    for what, name in sorted(times, key=lambda key: (key[0] != "tools/list", key[1])):
        got = times[(what, name)]
        median, base = statistics.median(got), statistics.median(times[(what, "baseline")])
        row = f"| {what} | {name} | {median:.2f} | {min(got):.2f} | {max(got):.2f} |"
        print(f"{row} {median / base:.2f}x |")


if __name__ == "__main__":
    main()
