#!/usr/bin/env python3
"""Record what the real ``ddgs`` client returns and raises, offline, for the adapter's tests.

``ddgs`` talks to fixed public hosts through its own HTTP client, so tests stand in a stub
for it; the stub replays these recordings of the real library (tests/fixtures/ddgs/
recorded.json):

- ``results``: ``DDGS().text()`` on the duckduckgo engine, its HTTP layer answering with
  tests/fixtures/ddgs/duckduckgo_results.html (the real parser, filter and ranker ran);
- ``no_results``: every engine answering without a page (what a non-200 status gives);
- ``connect_refused``: its client pointed at a loopback proxy where nothing listens;
- ``timeout``: its client pointed at a loopback proxy that accepts and never answers;
- ``no_network`` (only with ``--no-network``, on a machine with no network): every engine
  asked as a person's search asks them (``backend="auto"``, no proxy), each failing to look
  up its host: what a search offline really raises.

    .venv/bin/python scripts/record_ddgs.py [--no-network]

Nothing leaves the machine: the client only ever reaches 127.0.0.1, except with
``--no-network``, which asks the system's resolver and is for a machine that has none.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any
from unittest import mock

from ddgs import DDGS
from ddgs.base import BaseSearchEngine
from ddgs.exceptions import DDGSException

HERE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ddgs"
QUERY = "python asyncio tutorial"
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port


def outcome(call: Any) -> dict[str, Any]:
    try:
        return {"returns": call()}
    except DDGSException as exc:
        return {"raises": type(exc).__name__, "message": str(exc)}


def black_hole() -> str:
    """A loopback proxy that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            held.append(server.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}"


def main() -> int:
    os.environ["DDGS_PROXY"] = DEAD  # belt and braces: no engine may reach a public host
    page = (HERE / "duckduckgo_results.html").read_text(encoding="utf-8")
    recorded: dict[str, Any] = {
        "about": "Real outputs of the ddgs client, recorded offline by scripts/record_ddgs.py.",
        "ddgs": importlib.metadata.version("ddgs"),
        "query": QUERY,
    }
    with mock.patch.object(BaseSearchEngine, "request", lambda self, *a, **k: page):
        recorded["results"] = outcome(
            lambda: DDGS(proxy=DEAD).text(QUERY, max_results=5, backend="duckduckgo")
        )
    with mock.patch.object(BaseSearchEngine, "request", lambda self, *a, **k: None):
        recorded["no_results"] = outcome(
            lambda: DDGS(proxy=DEAD).text(QUERY, max_results=5, backend="duckduckgo")
        )
    recorded["connect_refused"] = outcome(
        lambda: DDGS(proxy=DEAD, timeout=3).text(QUERY, max_results=5, backend="duckduckgo")
    )
    recorded["timeout"] = outcome(
        lambda: DDGS(proxy=black_hole(), timeout=1).text(QUERY, max_results=5, backend="duckduckgo")
    )
    if "--no-network" in sys.argv[1:]:
        del os.environ["DDGS_PROXY"]  # as a person's search runs: no proxy, the resolver asked
        recorded["no_network"] = outcome(lambda: DDGS(timeout=3).text(QUERY, max_results=5))
    else:  # keep the last recording of it
        known = json.loads((HERE / "recorded.json").read_text(encoding="utf-8"))
        if "no_network" in known:
            recorded["no_network"] = known["no_network"]
    out = HERE / "recorded.json"
    out.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
