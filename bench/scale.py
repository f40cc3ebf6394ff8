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

People (issue 29): what identity and owner checks cost a turn. Per store (Postgres, then
SQLite) two ``local2 serve`` processes, each over a store of its own: one with nobody
configured (requests without a token: local's, as before people), one with alice and bob
(every request with a bearer token, each new session claimed, every read and write
owner-checked); half-way the two stores swap roles and both processes start afresh, so
neither store's own speed counts. C clients at once (half alice's, half bob's) each ask T
turns of a new session on both, every turn ``POST /query`` then
``GET /sessions/{id}/history``, the two configurations' turns back to back in alternating
order, so the machine's noise falls on both alike; the ratio of each pair is kept. The
model answers at once (``--users-delay 0``): the ratio is of LoCAL2's own time alone.

    .venv/bin/python bench/scale.py [--sessions 1,8,32] [--turns 4] [--delay 0.5]
    .venv/bin/python bench/scale.py --users [--rounds 40] [--users-clients 1]
        [--stores postgres,sqlite] [--users-delay 0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from local2.config import load_settings
from local2.storage import People, open_people
from local2_testkit.chroma_server import TempChroma
from local2_testkit.ollama_server import FakeOllama, Reply
from local2_testkit.postgres import TempPostgres
from local2_testkit.serve_process import ServeProcess

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


def run_scale(args: argparse.Namespace) -> None:
    """Turns/s and latency of one process on local files against two on Postgres."""
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
                ServeProcess(
                    conf, env={**env, "LOCAL2_HOME": str(tmp / f"{conf.name}-{i}")}, cold=True
                )
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


# -- people: what identity and owner checks cost a turn ----------------------------------------

NOBODY, PEOPLE = "nobody configured", "alice and bob configured"
NAMES = ("alice", "bob")


@dataclass
class Side:
    """One ``local2 serve`` process over a store of its own, with or without people."""

    url: str
    people: People
    tokens: dict[str, str] = field(default_factory=dict)

    def configure(self, configured: bool) -> None:
        """Nobody, or alice and bob (new tokens each time), before the process starts."""
        for row in self.people.list():
            self.people.remove(row["name"])
        self.tokens = {name: self.people.add(name) for name in NAMES} if configured else {}

    @property
    def name(self) -> str:
        return PEOPLE if self.tokens else NOBODY


class Timed(NamedTuple):
    """One turn: ``POST /query`` and ``GET`` history milliseconds, and whether the history
    did not show the turn yet."""

    post: float
    get: float
    lagged: bool

    @property
    def ms(self) -> float:
        return self.post + self.get


@dataclass
class Tally:
    """Each configuration's turns by turn number, and the ratio of each pair of turns taken
    back to back (people configured / nobody configured) in each half."""

    turns: dict[str, list[tuple[int, Timed]]] = field(
        default_factory=lambda: {NOBODY: [], PEOPLE: []}
    )
    halves: list[list[float]] = field(default_factory=lambda: [[], []])
    guard: threading.Lock = field(default_factory=threading.Lock)

    def ms(self, name: str) -> list[float]:
        return [t.ms for _, t in self.turns[name]]

    def pairs(self) -> list[float]:
        return self.halves[0] + self.halves[1]


def one_turn(http: httpx.Client, side: Side, who: str, session: str, turn: int) -> Timed:
    """``POST /query`` then ``GET`` the session's history, as ``who`` (their bearer token
    when ``side`` has people). The history may not show the turn yet: the answer is handed
    over at publish and the turn's checkpoints are written in the background (a first
    turn's session may even answer 404 until then)."""
    token = side.tokens.get(who)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    started = time.perf_counter()
    asked = http.post(
        f"{side.url}/query",
        json={"query": f"Question {turn}?", "session_id": session},
        headers=headers,
    )
    answered = time.perf_counter()
    asked.raise_for_status()
    shown = http.get(f"{side.url}/sessions/{session}/history", headers=headers)
    post, get = (answered - started) * 1000, (time.perf_counter() - answered) * 1000
    if turn == 0 and shown.status_code == 404:
        return Timed(post, get, True)
    shown.raise_for_status()
    return Timed(post, get, len(shown.json()["turns"]) <= turn)


def paired_round(sides: list[Side], clients: int, turns: int, round_: int, tally: Tally) -> None:
    """C clients at once (alice's and bob's in turn, round by round), each with a new
    session on each side: T turns on each, the two sides' turns back to back in alternating
    order."""
    half = 0 if sides[0].tokens else 1
    tag = f"h{half}r{round_}"

    def client(index: int) -> None:
        who = NAMES[(index + round_) % len(NAMES)]
        with httpx.Client(timeout=300) as http:
            for turn in range(turns):
                order = sides if (index + turn) % 2 == 0 else sides[::-1]
                taken = {s.name: one_turn(http, s, who, f"{tag}-{index}", turn) for s in order}
                with tally.guard:
                    for name, timed in taken.items():
                        tally.turns[name].append((turn, timed))
                    tally.halves[half].append(taken[PEOPLE].ms / taken[NOBODY].ms)

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))


def users_store(
    store: str, args: argparse.Namespace, tmp: Path, fake: FakeOllama, stack: ExitStack
) -> Tally:
    """Two processes, each over a store of its own: one with people, one without, swapped
    half-way (so that neither store's own speed counts), their turns paired. Each half
    starts both processes afresh: one that has had people keeps asking for a credential
    after they are removed (access never widens while a server runs)."""
    postgres = stack.enter_context(TempPostgres(durable=True)) if store == "postgres" else None
    conf = config_dir(tmp / f"users-{store}", fake.url, postgres=bool(postgres), chroma_url=None)
    servers, sides = [], []
    for i in range(2):
        home = tmp / f"users-{store}-{i}"
        env = {"LOCAL2_HOME": str(home)}
        system: dict[str, Any] = {"data_dir": str(home)}
        if postgres is not None:
            system["postgres_url"] = env["LOCAL2_POSTGRES_URL"] = postgres.create_database(
                f"users{i}"
            )
        servers.append(ServeProcess(conf, env=env, cold=True))
        stack.callback(servers[i].stop)
        people = open_people(load_settings(conf, overrides={"system": system}))
        stack.callback(getattr(people, "close", lambda: None))
        sides.append(Side("", people))

    tally = Tally()
    for half in range(2):
        for i, side in enumerate(sides):
            side.configure(i == half)
        for server in servers:
            server.launch()
        for side, server in zip(sides, servers, strict=True):
            side.url = server.wait_ready().url
        for round_ in (-2, -1):  # first turns (and each person's memory) load lazily
            paired_round(sides, args.users_clients, 1, round_, Tally())
        for round_ in range(args.rounds // 2):
            time.sleep(0.5)  # the last round's memory ingest finishes outside the measure
            paired_round(sides, args.users_clients, args.turns, round_, tally)
        print(
            f"users on {store}, people on process {half}: median pair ratio "
            f"{statistics.median(tally.halves[half]):.3f}",
            file=sys.stderr,
        )
        for server in servers:
            server.stop()
    return tally


def run_users(args: argparse.Namespace) -> None:
    """What identity and owner checks cost a turn, on each store, as a ratio."""
    results: dict[str, Tally] = {}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        fake = stack.enter_context(FakeOllama(brain, delay_s=args.users_delay))
        for store in args.stores.split(","):
            results[store] = users_store(store, args, tmp, fake, stack)

    print(
        f"\nPeople: {args.users_clients} clients at once, {args.rounds} rounds of "
        f"{args.turns} turns each (POST /query + GET history), every turn paired with one "
        f"in the other configuration; model delay {args.users_delay:.2f} s; critic off; "
        "memory on.\n"
    )
    print(
        "| store | configuration | turns | mean ms | p50 ms | p95 ms | mean vs nobody "
        "| paired ratio: median (IQR) | median, each half |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for store, tally in results.items():
        base = statistics.fmean(tally.ms(NOBODY))
        for name in (NOBODY, PEOPLE):
            taken = sorted(tally.ms(name))
            mean = statistics.fmean(taken)
            p95 = taken[min(len(taken) - 1, round(0.95 * (len(taken) - 1)))]
            paired = halves = "-"
            if name == PEOPLE:
                q1, q2, q3 = statistics.quantiles(tally.pairs(), n=4)
                paired = f"{q2:.3f} ({q1:.3f}-{q3:.3f})"
                halves = " / ".join(f"{statistics.median(h):.3f}" for h in tally.halves)
            print(
                f"| {store} | {name} | {len(taken)} | {mean:.0f} | "
                f"{statistics.median(taken):.0f} | {p95:.0f} | {mean / base:.3f}x | "
                f"{paired} | {halves} |"
            )
    print("\nTarget: people configured / nobody configured <= 1.05.\n")
    print(
        "| store | configuration | POST /query, first turn: p50 ms | later turns: p50 ms "
        "| GET history: p50 ms | history not showing the turn yet |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for store, tally in results.items():
        for name in (NOBODY, PEOPLE):
            turns = tally.turns[name]
            first = [t.post for n, t in turns if n == 0]
            later = [t.post for n, t in turns if n > 0] or [0.0]
            lagged = sum(t.lagged for _, t in turns)
            print(
                f"| {store} | {name} | {statistics.median(first):.0f} | "
                f"{statistics.median(later):.0f} | "
                f"{statistics.median(t.get for _, t in turns):.0f} | {lagged} of {len(turns)} |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,8,32")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--users", action="store_true", help="only the people measurement")
    parser.add_argument("--rounds", type=int, default=40, help="people: rounds (even)")
    parser.add_argument("--users-clients", type=int, default=1, help="people: clients at once")
    parser.add_argument("--users-delay", type=float, default=0.0)
    parser.add_argument("--stores", default="postgres,sqlite", help="people: stores measured")
    args = parser.parse_args()
    if not args.users:
        run_scale(args)
    run_users(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
