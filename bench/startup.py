"""Start-up budget: how long LoCAL2's commands take to start, beside ``python -c pass``.

Every command runs as a person runs it (the installed ``local2`` script, a fresh process), on
a fresh data directory, with no Ollama (``OLLAMA_HOST`` points at a closed port), so the
embedded model answers and memory uses the offline MiniLM. Measured, median of --repeat:
- ``python -c pass``: the interpreter's own start, the baseline;
- ``local2 --help``;
- commands that run no model: ``memory list``, ``memory delete``, ``history``, ``feedback``,
  ``runs list``, ``research list``;
- ``local2 ask --backend embedded``: first answer token on stdout, and the whole command; the
  first ask on the new data directory (which reads the fixed prompt start and saves the model's
  state after it) is shown on its own row, once;
- ``local2 ui --backend embedded``: until ``GET /`` serves the app's page.
Wall time is what a person waits; CPU time (user + system of the process, all threads, up
to the same moment) is printed beside it because on a shared machine the wall time mostly
measures the queue for a core.

    .venv/bin/python bench/startup.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from local2.ports import free_port  # closed again at once: nothing listens there

BIN = Path(sys.executable).parent
LOCAL2 = str(BIN / "local2")
QUESTION = "What is the capital of France?"
TARGETS = {"help": 0.5, "model-free": 1.5, "ui": 5.0, "token": 3.0}


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds of a command run to its end."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr.read()!r}")
    return elapsed, usage.ru_utime + usage.ru_stime


def ask(env: dict[str, str], session: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds to the first byte of the answer on stdout, and to the end."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [LOCAL2, "ask", "--backend", "embedded", "-s", session, QUESTION],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    reader.start()
    first = proc.stdout.read(1)
    first_token = (time.perf_counter() - started, proc_cpu(proc.pid))
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not first:
        reader.join(5)
        said = b"".join(errors).decode()[-2000:]
        raise SystemExit(f"local2 ask failed (exit {code}, stdout {first!r}): {said}")
    return first_token, (time.perf_counter() - started, usage.ru_utime + usage.ru_stime)


SEED = """
import sys
from local2.config import load_settings
from local2.memory._store import EngramStore
store = EngramStore.open(load_settings())
for i in range(int(sys.argv[1])):
    print(store.save(f"Locker {i} has code {i}{i}{i}.", session_id="seed", query_id=f"seed-{i}"))
store.close()
"""


def seed_memories(env: dict[str, str], n: int) -> list[str]:
    """``n`` memories for ``memory delete`` to forget (questions alone leave no facts)."""
    seeded = subprocess.run(
        [sys.executable, "-c", SEED, str(n)], env=env, capture_output=True, text=True, check=True
    )
    return seeded.stdout.split()


def ui(env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds until the app's page is served."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [LOCAL2, "ui", "--port", "0", "--backend", "embedded"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        if not match:
            raise SystemExit(f"local2 ui printed no address: {line!r}")
        while True:
            try:
                page = httpx.get(match.group(1) + "/", timeout=60)
                if page.status_code == 200 and "gradio" in page.text.lower():
                    return time.perf_counter() - started, proc_cpu(proc.pid)
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.perf_counter() - started > 300:
                raise SystemExit("local2 ui never served its page")
            time.sleep(0.02)
    finally:
        proc.terminate()
        proc.wait(60)


Row = tuple[str, tuple[float, float], str]


def median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.repeat
    work = Path(tempfile.mkdtemp(prefix="local2-startup-"))
    env = {
        **os.environ,
        "LOCAL2_HOME": str(work / "home"),
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        # Keyless web search (ddgs), should the model search, reaches a closed port: no network.
        "DDGS_PROXY": f"http://127.0.0.1:{free_port()}",
    }
    env.pop("LOCAL2_CONFIG", None)
    rows: list[Row] = []

    def add(name: str, samples: list[tuple[float, float]], kind: str = "") -> None:
        rows.append((name, median(samples), kind))
        print(f"# {name}: {rows[-1][1][0]:.2f} s", file=sys.stderr, flush=True)

    try:
        add("python -c pass", [timed([sys.executable, "-c", "pass"], env) for _ in range(2 * n)])
        add("local2 --help", [timed([LOCAL2, "--help"], env) for _ in range(n)], "help")
        # The first ask on a new data directory reads the fixed prompt start and saves
        # llama.cpp's state after it; later asks load that state (local2.models._prefix_state).
        first, *asks = [ask(env, f"bench-{i}") for i in range(n + 1)]
        add("local2 ask --backend embedded, new data dir: first answer token", [first[0]])
        add("local2 ask --backend embedded: first answer token", [a[0] for a in asks], "token")
        add("local2 ask --backend embedded: whole command", [a[1] for a in asks])
        listed = subprocess.run(
            [LOCAL2, "runs", "list", "--json"], env=env, capture_output=True, text=True, check=True
        )
        run = json.loads(listed.stdout)[0]
        memories = seed_memories(env, n)
        session, query_id = run["session_id"], run["query_id"]
        model_free: dict[str, Callable[[int], list[str]]] = {
            "local2 memory list": lambda i: [LOCAL2, "memory", "list"],
            "local2 memory delete ID": lambda i: [LOCAL2, "memory", "delete", memories[i]],
            "local2 history SESSION": lambda i: [LOCAL2, "history", session],
            "local2 feedback SESSION QUERY -r 4": lambda i: [
                *(LOCAL2, "feedback", session, query_id, "-r", "4")
            ],
            "local2 runs list": lambda i: [LOCAL2, "runs", "list"],
            "local2 research list": lambda i: [LOCAL2, "research", "list"],
        }
        for name, command in model_free.items():
            add(name, [timed(command(i), env) for i in range(n)], "model-free")
        add("local2 ui --backend embedded: page served", [ui(env) for _ in range(n)], "ui")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base_wall, base_cpu = rows[0][1]
    print(
        f"| command | wall s (median of {n}) | CPU s | wall over `python -c pass` "
        "| target | met (wall) | met (CPU) |"
    )
    print("|---|---:|---:|---:|---|---|---|")
    for name, (wall, cpu), kind in rows:
        target = TARGETS.get(kind)
        if target is None:
            print(f"| `{name}` | {wall:.2f} | {cpu:.2f} | {wall - base_wall:+.2f} | | | |")
            continue
        # --help is measured over the interpreter's own start; the rest from the command's.
        over = kind == "help"
        spent_wall, spent_cpu = (wall - base_wall, cpu - base_cpu) if over else (wall, cpu)
        shown = f"<= {target} s" + (" over" if over else "")
        met = ["yes" if spent <= target else "**no**" for spent in (spent_wall, spent_cpu)]
        print(
            f"| `{name}` | {wall:.2f} | {cpu:.2f} | {wall - base_wall:+.2f} | {shown} "
            f"| {met[0]} | {met[1]} |"
        )
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n(load average after the run: {load}; CPUs: {os.cpu_count()})")


if __name__ == "__main__":
    main()
