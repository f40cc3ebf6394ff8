"""Hostile-page benchmark: time and memory of fetching pages built to hurt an extractor.

Each page is served by a real HTTP server on 127.0.0.1 and fetched by ``web_fetch``; the
server-side cost is this process's peak resident set over the fetch (kernel high-water
mark) and the wall time. The extraction worker's peak is the pool's own figure for the
page's job: the worker's ``VmHWM``, which it resets when a job starts and reports in its
reply (or, for a worker that died, the peak sampled while it ran); beside it, the highest
``VmRSS`` this benchmark saw polling the busy worker every 2 ms, as a check. Baseline, in
the same run: the fetch path before issue 13 (httpx decodes the body, the first
``max_bytes`` are kept, trafilatura runs in this process with no limit).

    .venv/bin/python bench/hostile_pages.py

Pages: a gzip bomb (256 MiB of ``<div>`` in 256 KB), 140k ``<span>``s, 2 MB of ``<p>``,
a page of 48k tags just under the element cap (the slowest page trafilatura still gets),
and a normal article.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from local2.bounded import WorkerPool, status_mb
from local2.config._schema import WebFetchSettings
from local2.documents import decode_body, extract_main_text
from local2.errors import ExtractionFailed, ToolError
from local2.tools._web_fetch import WebFetch
from local2_testkit.rss import peak_rss
from local2_testkit.web_server import LocalServer, gzip_bomb, send, send_encoded

CORPUS = Path(__file__).parent / "extraction_corpus" / "pages"
CAP = 2_000_000
TIMEOUT_S = 15.0


PAGES = {
    "gzip bomb (256 MiB in 256 KB)": ("/bomb", lambda: send_encoded(gzip_bomb(), "gzip")),
    "140k <span>s": (
        "/spans",
        lambda: send(b"<html><body>" + b"<span>x</span>" * 140_000 + b"</body></html>"),
    ),
    "2 MB of <p>": ("/p", lambda: send(b"<html><body>" + b"<p>" * 700_000 + b"</body></html>")),
    "48k tags (just under the cap)": (
        "/slow",
        lambda: send(b"<html><body>" + b"<div><p>Some words in a sentence.</p></div>" * 12_000),
    ),
    "normal article": ("/normal", lambda: send((CORPUS / "01_harbour_bridge.html").read_bytes())),
}


def baseline_fetch(url: str) -> str:
    """web_fetch before issue 13, for the same page: decoded by httpx, extracted in-process."""
    with httpx.Client(timeout=TIMEOUT_S) as client, client.stream("GET", url) as response:
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= CAP:
                del body[CAP:]
                break
        charset = response.charset_encoding
    return extract_main_text(decode_body(bytes(body), charset, True))


class MeasuredPool(WorkerPool):
    """web_fetch's worker pool, keeping its last job's peak memory as the pool learns it.

    Read from the pool, not from an idle worker's ``/proc``: a worker recycled after its job
    has none left, and one that served another job since has reset its high-water mark.
    """

    def __init__(self) -> None:
        super().__init__("local2.tools._extract_worker", "page extraction")
        self.peak_mb: float | None = None
        self.polled_mb = 0.0
        self._polling = threading.Event()

    def run(
        self,
        header: Mapping[str, Any],
        body: bytes,
        memory_mb: int,
        deadline: float,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        self.peak_mb, self.polled_mb = None, 0.0
        self._polling.set()
        poller = threading.Thread(target=self._poll, daemon=True)
        poller.start()
        try:
            reply = super().run(header, body, memory_mb, deadline, cancel)
        except ExtractionFailed as exc:
            self.peak_mb = exc.peak_rss_mb or None
            raise
        finally:
            self._polling.clear()
            poller.join()
        self.peak_mb = float(reply.get("rss_peak_mb", 0.0)) or None
        return reply

    def _poll(self) -> None:
        while self._polling.is_set():
            for pid in self.busy_pids():
                self.polled_mb = max(self.polled_mb, status_mb("VmRSS", pid))
            time.sleep(0.002)

    def peak(self) -> str:
        return "(no job)" if self.peak_mb is None else f"{self.peak_mb:.0f}"


def measure(fetch: Callable[[], str]) -> tuple[float, float, str]:
    started = time.monotonic()
    with peak_rss() as memory:
        try:
            outcome = fetch()
        except ToolError as exc:
            outcome = str(exc)
    return time.monotonic() - started, memory.added_mb, outcome


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    server = LocalServer({path: make() for path, make in PAGES.values()})
    cfg = WebFetchSettings(allow_hosts=["127.0.0.1"], timeout_s=TIMEOUT_S, max_bytes=CAP)
    rows = []
    try:
        for label, (path, _) in PAGES.items():
            pool = MeasuredPool()
            fetcher = WebFetch(cfg, pool=pool)
            fetcher({"url": server.url("/normal")})  # a warm worker, as in a running server
            url = server.url(path)
            pool.peak_mb = None
            seconds, added, outcome = measure(lambda: fetcher({"url": url}).text)  # noqa: B023
            polled = f"{pool.polled_mb:.0f}" if pool.peak_mb is not None else ""
            rows.append([label, seconds, added, pool.peak(), polled, _summary(outcome)])
            pool.close()
        for row, (path, _) in zip(rows, PAGES.values(), strict=True):
            seconds, added, outcome = measure(lambda: baseline_fetch(server.url(path)))  # noqa: B023
            row += [seconds, added, _summary(outcome)]
    finally:
        server.close()
    print(f"Fetch deadline {TIMEOUT_S:g} s (tool timeout {TIMEOUT_S + 5:g} s), max_bytes {CAP:,}.")
    print(
        "\n| page | web_fetch s | server RSS added MB | worker peak RSS MB | (polled) | result "
        "| before: s | before: RSS added MB | before: result |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---|")
    for label, s, mb, worker, polled, out, bs, bmb, bout in rows:
        print(
            f"| {label} | {s:.2f} | {mb:.0f} | {worker} | {polled} | {out} | {bs:.2f} | {bmb:.0f} "
            f"| {bout} |"
        )
    worst, most = max(r[1] for r in rows[:-1]), max(r[2] for r in rows)
    print(f"\nSlowest hostile page: {worst:.2f} s; most server RSS added: {most:.0f} MB.")
    return 0


def _summary(outcome: str) -> str:
    text = outcome.partition("\nExtracted text:\n")[2] or outcome
    text = " ".join(text.split())
    return (text[:60] + "…" if len(text) > 60 else text).replace("|", "/") or "(empty)"


if __name__ == "__main__":
    sys.exit(main())
