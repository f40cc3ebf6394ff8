"""The app's handlers called as its page calls them: Gradio's queue over HTTP (httpx), with
the browser's cookies (its sign-in) in ``client``."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class AppCall:
    """What one handler call got: the queue's answer to joining (401: not signed in), and
    the outputs of every message it streamed (a generator's each step, then the last)."""

    status: int
    outputs: list[list[Any]] = field(default_factory=list)

    def text(self) -> str:
        """Everything the handler sent back, as one string to search."""
        return json.dumps(self.outputs)


def call_handler(client: httpx.Client, api_name: str, data: list[Any]) -> AppCall:
    """Call the handler Gradio names ``api_name`` with ``data`` (its inputs, in order)."""
    config = client.get("/config")
    if config.status_code != 200:
        return AppCall(config.status_code)
    event = next(d for d in config.json()["dependencies"] if d.get("api_name") == api_name)
    session = uuid.uuid4().hex[:12]
    joined = client.post(
        "/gradio_api/queue/join",
        json={
            "data": data,
            "fn_index": event["id"],
            "session_hash": session,
            "event_data": None,
            "trigger_id": event["targets"][0][0] if event["targets"] else None,
        },
    )
    call = AppCall(joined.status_code)
    if joined.status_code != 200:
        return call
    with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as sse:
        for line in sse.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[len("data:") :])
            kind = message.get("msg")
            if kind in ("process_generating", "process_completed"):
                call.outputs.append((message.get("output") or {}).get("data") or [])
            if kind in ("process_completed", "close_stream"):
                break
    return call
