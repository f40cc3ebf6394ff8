"""Time outside the model: what a turn through the HTTP API costs beyond the model's own time.

The real stack on loopback: uvicorn serving ``local2.http._app``, the agent with its SQLite
checkpointer, Chroma memory (embeddings from the fake Ollama's ``/api/embed``), the critic
and the default tools, and ``ChatOllama`` talking to the Ollama-protocol test server
(``local2_testkit.ollama_server``) whose every chat reply waits ``--delay`` seconds, then
streams its chunks ``--chunk-gap`` seconds apart (0: all at once; a real model streams its
tokens as it makes them, and the client handles each chunk while the next is made). One
session, ``--turns`` turns (default 300), each ``POST /query`` (the answer first); between
turns the critic and memory are let finish (untimed), as when a person reads the answer.

Per turn: time to answer (client, request to response) and the model's share of it (the
fake server's own time, from reading a request's first line to the end of its reply, for
the requests on the path to the answer: the generator's chats and query embeddings, not the
critic's or the memory's writes); outside = answer - model.
Baselines in the same run: ChatOllama alone against the same server (the client's own
overhead per call), and ``wait=critique`` (what ``POST /query`` cost before: answer and
grade). With ``--baseline-tree`` a second server runs another source tree (an earlier
commit's worktree) and the two take turns (A B B A ...), so that both see the same minutes of
this shared, noisy machine; the table then gives their ratio.

``--back-to-back``: the person does not pause. Each tree gets ``--turns`` turns in a session
of its own, each ``POST /query`` sent as soon as the last one answered, while the last
answer's critic and memory may still be at work; the trees take their series in turns
(A B, then B A, ``--rounds`` times). Per turn: time to answer and outside the model, as
above (a series' first turn, which follows no answer, is left out). After each series every
turn's grade is waited for (untimed) and counted: the audit record of a turn has its grade
once it is graded, whenever that is.

    .venv/bin/python bench/overhead.py [--turns 300] [--delay 1.0] [--chunk-gap 0.0]
        [--baseline-tree ../earlier-worktree] [--back-to-back [--rounds 2]]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from local2.cli._stories import serve_api
from local2.config import load_settings
from local2.http._app import create_api
from local2.service.agent import Agent
from local2.storage._audit_log import folder_name, runs_dir
from local2_testkit.ollama_server import FakeOllama, RuleBrain, Served
from local2_testkit.serve_process import ServeProcess

MODEL = "qwen3:4b"
SETTLE_S = 3.0  # after the servers answer, before the first timed turn
Waiter = Callable[[str, str], dict[str, Any]]
QUESTIONS = [
    "What is the capital of France?",
    "What is the Python GIL?",
    "My favourite colour is teal.",
    "Hello there",
]


def is_critic(request: Served) -> bool:
    return any(
        "###Response to evaluate" in str(m.get("content"))
        for m in request.body.get("messages") or []
    )


def on_path(request: Served) -> bool:
    """A model request the answer waits for: a generator chat or a query embedding (not the
    critic's grading, nor memory's fact extraction, a chat under a JSON-schema ``format``)."""
    if request.path == "/api/chat":
        return not is_critic(request) and not request.body.get("format")
    if request.path == "/api/embed":
        inputs = request.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        return any(str(t).startswith("search_query: ") for t in texts)
    return False


def model_time(fake: FakeOllama, start: float, end: float) -> float:
    """Seconds the fake model spent on requests on the path that began in [start, end]."""
    with fake.lock:
        served = list(fake.served)
    return sum(
        min(r.ended, end) - r.started for r in served if start <= r.started <= end and on_path(r)
    )


def chat_alone(fake: FakeOllama, n: int) -> list[float]:
    """ChatOllama's own overhead per call: client time minus the server's time."""
    from langchain_ollama import ChatOllama

    chat = ChatOllama(model=MODEL, base_url=fake.url, reasoning=True, num_ctx=32000)
    out = []
    for i in range(n):
        start = time.perf_counter()
        chat.invoke(QUESTIONS[i % len(QUESTIONS)])
        end = time.perf_counter()
        out.append(end - start - model_time(fake, start, end))
    return out


def graded(record: Path) -> dict[str, Any]:
    """A turn's audit record once it is written and holds its grade (else empty)."""
    try:
        found: dict[str, Any] = json.loads(record.read_text())
    except (OSError, ValueError):  # not written yet, or being replaced
        return {}
    return found if found.get("critique") else {}


def memory_after_answer(record: dict[str, Any]) -> float | None:
    """Seconds from the answer (``answer.dialog``) to the turn stored (``memory.ingested``):
    the memory work a next question waits for."""
    at = {e.get("subject"): e.get("t") for e in record.get("events") or []}
    done, answered = at.get("memory.ingested"), at.get("answer.dialog")
    return None if done is None or answered is None else float(done) - float(answered)


def summary(values: list[float]) -> str:
    return f"{statistics.mean(values) * 1000:.1f} / {statistics.median(values) * 1000:.1f}"


@contextmanager
def local2_server(
    fake: FakeOllama, work: Path, in_process: bool, tree: Path | None = None
) -> Iterator[tuple[str, Waiter]]:
    """The LoCAL2 server under test: its URL, and a wait for a turn's critic and memory.
    ``tree``: serve the source tree there (its ``src``) instead of this one."""
    work.mkdir(parents=True, exist_ok=True)
    overrides = {
        "system": {"ollama_host": fake.url, "data_dir": str(work / "data")},
        "generator": {"backend": "ollama", "model": MODEL},
        "files": {"audit_log": True},
        "web": {"search": {"provider": "mock"}},  # canned results: no network
    }
    settings = load_settings(overrides=overrides)

    def audited(session_id: str, query_id: str, timeout: float = 120) -> dict[str, Any]:
        """The turn's audit record: written once the turn has ended (critic and memory done),
        with the turn's grade once it is graded (a grade that came after the next turn too)."""
        record = runs_dir(settings) / folder_name(session_id) / f"{folder_name(query_id)}.json"
        deadline = time.monotonic() + timeout
        while not (found := graded(record)):
            if time.monotonic() > deadline:
                raise SystemExit(f"turn {query_id} was never graded")
            time.sleep(0.01)
        return found

    if in_process:
        agent = Agent(settings, backend="ollama")
        agent.warm_up()  # as `local2 serve` does once it listens
        with serve_api(create_api(agent)) as url:
            yield url, audited
        agent.close()
        return
    config = work / "config"
    config.mkdir()
    for section, values in overrides.items():
        (config / f"{section}.yaml").write_text(yaml.safe_dump(values))
    env = {"LOCAL2_HOME": str(work / "home")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree.resolve() / "src")
    with ServeProcess(config, env=env, cold=True) as served:
        yield served.url, audited


Servers = dict[str, tuple[httpx.Client, Waiter]]


def ask(client: httpx.Client, fake: FakeOllama, body: dict[str, str]) -> tuple[str, float, float]:
    """One ``POST /query``: its query id, time to answer and time outside the model."""
    start = time.perf_counter()
    reply = client.post("/query", json=body)
    end = time.perf_counter()
    assert reply.status_code == 200 and reply.json()["answer"], reply.text
    return reply.json()["query_id"], end - start, end - start - model_time(fake, start, end)


def paused(args: argparse.Namespace, fake: FakeOllama, served: Servers) -> None:
    """The person reads each answer: the critic and memory finish between turns (untimed)."""
    answers: dict[str, list[float]] = {name: [] for name in served}
    outside: dict[str, list[float]] = {name: [] for name in served}
    for i in range(args.turns):
        body = {"query": QUESTIONS[i % len(QUESTIONS)], "session_id": "bench"}
        for name in list(served) if i % 2 == 0 else list(served)[::-1]:
            client, ended = served[name]
            query_id, answered, out = ask(client, fake, body)
            answers[name].append(answered)
            outside[name].append(out)
            ended("bench", query_id)
        if (i + 1) % 50 == 0:
            print(f"# {i + 1} turns", file=sys.stderr, flush=True)
    client = served["this tree"][0]
    graded = []
    for i in range(10):
        body = {"query": QUESTIONS[i % len(QUESTIONS)], "session_id": "graded"}
        start = time.perf_counter()
        client.post("/query?wait=critique", json=body).raise_for_status()
        graded.append(time.perf_counter() - start)
    alone = chat_alone(fake, 20)

    first, last = slice(0, 10), slice(289, 300) if args.turns >= 300 else slice(-10, None)
    last_label = "290-300" if args.turns >= 300 else f"last 10 of {args.turns}"
    heading(args)
    print("| | turns 1-10 | turns " + last_label + " |")
    print("|---|---:|---:|")
    mine, theirs = outside["this tree"], outside.get("baseline tree")
    answered = answers["this tree"]
    print(
        f"| time to answer (`POST /query`) | {summary(answered[first])} "
        f"| {summary(answered[last])} |"
    )
    print(
        f"| outside the model, on the path to the answer | {summary(mine[first])} "
        f"| {summary(mine[last])} |"
    )
    share = statistics.mean(mine[last]) / statistics.mean(answered[last]) * 100
    print(f"| outside / answer | | {share:.2f} % |")
    if theirs:
        print(
            f"| baseline tree `{args.baseline_tree}`: outside the model, turns alternated "
            f"| {summary(theirs[first])} | {summary(theirs[last])} |"
        )
        ratios = [
            statistics.mean(mine[part]) / statistics.mean(theirs[part]) for part in (first, last)
        ]
        print(f"| this tree / baseline tree | {ratios[0]:.2f}x | {ratios[1]:.2f}x |")
    print(f"| baseline: ChatOllama alone, outside the model per call | {summary(alone)} | |")
    print(f"| baseline: answer and grade (`wait=critique`), 10 turns | {summary(graded)} | |")
    worst = max(statistics.mean(mine[first]), statistics.mean(mine[last])) * 1000
    verdict = "met" if worst <= 20 else "MISSED"
    print(f"\nTarget <= 20 ms outside the model per turn: {verdict} ({worst:.1f} ms).")


def back_to_back(args: argparse.Namespace, fake: FakeOllama, served: Servers) -> None:
    """The person does not pause: each question follows the last answer at once."""
    answers: dict[str, list[float]] = {name: [] for name in served}
    outside: dict[str, list[float]] = {name: [] for name in served}
    graded_: dict[str, list[int]] = {name: [] for name in served}  # per series: turns graded
    to_grade: dict[str, list[float]] = {name: [] for name in served}  # last answer -> all graded
    stored: dict[str, list[float]] = {name: [] for name in served}  # answer -> memory stored
    for round_ in range(args.rounds):
        for name in list(served) if round_ % 2 == 0 else list(served)[::-1]:
            client, ended = served[name]
            session = f"b2b-{round_}"
            asked = []
            for i in range(args.turns):
                body = {"query": QUESTIONS[i % len(QUESTIONS)], "session_id": session}
                query_id, answered, out = ask(client, fake, body)
                asked.append(query_id)
                if i:  # the first turn of a series follows no answer
                    answers[name].append(answered)
                    outside[name].append(out)
            done = time.perf_counter()
            for query_id in asked:  # untimed: each turn's grade, whenever it comes
                after = memory_after_answer(ended(session, query_id))
                if after is not None:
                    stored[name].append(after)
            to_grade[name].append(time.perf_counter() - done)
            graded_[name].append(len(asked))
            print(f"# {name}: round {round_ + 1} done", file=sys.stderr, flush=True)
    heading(args)
    print(f"Back to back: {args.rounds} series of {args.turns} turns per tree, each in a session")
    print("of its own; a series' first turn is left out.\n")
    print(
        "| | time to answer | outside the model | memory stored, after the answer "
        "| turns graded | last answer to all graded (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name in served:
        label = "this tree" if name == "this tree" else f"baseline tree `{args.baseline_tree}`"
        total = args.turns * args.rounds
        waited = " / ".join(f"{s:.1f}" for s in to_grade[name])
        print(
            f"| {label} | {summary(answers[name])} | {summary(outside[name])} "
            f"| {summary(stored[name])} | {sum(graded_[name])} of {total} | {waited} |"
        )
    if "baseline tree" in served:
        ratio = statistics.mean(answers["this tree"]) / statistics.mean(answers["baseline tree"])
        print(f"| this tree / baseline tree, time to answer | {ratio:.2f}x | | | | |")


def heading(args: argparse.Namespace) -> None:
    where = "this process" if args.in_process else "a `local2 serve` process"
    print(
        f"LoCAL2 served from {where}; model reply delay {args.delay:.2f} s, "
        f"{args.chunk_gap * 1000:.0f} ms between chunks; times in ms, mean / median.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds before a reply")
    parser.add_argument(
        "--chunk-gap",
        type=float,
        default=0.0,
        help="seconds between a reply's streamed chunks, as a model generating tokens "
        "(0: the whole reply at once after --delay)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="serve from this process (sharing its interpreter with the client and the model "
        "server) instead of a `local2 serve` process",
    )
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        help="also serve LoCAL2 from this source tree (e.g. a worktree of an earlier commit), "
        "alternating turns with this one (A B B A ...), and compare the two",
    )
    parser.add_argument(
        "--back-to-back",
        action="store_true",
        help="ask each question as soon as the last one is answered (no pause for the critic)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="back-to-back series per tree")
    args = parser.parse_args()
    if args.baseline_tree and args.in_process:
        parser.error("--baseline-tree needs `local2 serve` processes (not --in-process)")
    work = Path(tempfile.mkdtemp(prefix="local2-overhead-"))
    trees: dict[str, Path | None] = {"this tree": None}
    if args.baseline_tree:
        trees["baseline tree"] = args.baseline_tree
    with (
        FakeOllama(RuleBrain(), delay_s=args.delay, chunk_delay_s=args.chunk_gap) as fake,
        ExitStack() as stack,
    ):
        served: Servers = {}
        for n, (name, tree) in enumerate(trees.items()):
            url, ended = stack.enter_context(
                local2_server(fake, work / str(n), args.in_process, tree)
            )
            served[name] = (stack.enter_context(httpx.Client(base_url=url, timeout=120)), ended)
        # A server warms up in the background once it answers: let that end (as it would
        # while a person types the first question), not share the CPU with the first turns.
        time.sleep(SETTLE_S)
        (back_to_back if args.back_to_back else paused)(args, fake, served)


if __name__ == "__main__":
    main()
