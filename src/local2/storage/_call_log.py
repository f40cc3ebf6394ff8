"""The MCP calls' audit log: one JSON line per call, ``<data_dir>/runs/~mcp-calls.jsonl``.

A turn (``ask``) and a research run are recorded as such (the turn's audit record, the run's
state); this log records every MCP call besides, reads included, as the audit log records a
turn: who made it (the person, and the transport: stdio or HTTP), which tool, resource or
prompt, its arguments (secrets redacted and strings cut to a preview, as in a turn's
record), how it ended, and the ids of what it made (a session and turn, a run). ``~`` is in
no session id, so the file never meets a session's folder beside it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from local2.storage._audit_log import runs_dir, scrubbed

if TYPE_CHECKING:
    from local2.config import Settings

log = logging.getLogger(__name__)

CALLS_FILE = "~mcp-calls.jsonl"


class CallRecord(TypedDict):
    """One line of the log."""

    version: int
    at: str  # ISO time, UTC
    person: str | None
    transport: str | None  # stdio or http
    method: str | None  # tools/call, resources/read, prompts/get
    name: str | None  # the tool, resource URI or prompt
    outcome: str | None  # answered, refused, failed, cancelled
    arguments: dict[str, Any]  # the call's arguments as its client sent them, scrubbed
    error: str | None
    ids: dict[str, str] | None  # what it made: session_id, query_id, run_id
    duration_s: float | None


CALL_VERSION = 1
_appending = threading.Lock()  # one line at a time from this process (O_APPEND across them)


def calls_path(settings: Settings) -> Path:
    return runs_dir(settings) / CALLS_FILE


def call_record(
    settings: Settings, call: Mapping[str, Any], arguments: Mapping[str, Any]
) -> CallRecord:
    """The log's line for ``call`` (person, transport, method, name, outcome, error, ids,
    duration_s): its ``arguments`` and every string scrubbed as a turn's record is."""
    limit = settings.files.audit_preview_chars
    record = {
        "version": CALL_VERSION,
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        **{k: call.get(k) for k in ("person", "transport", "method", "name", "outcome")},
        "arguments": scrubbed(dict(arguments), limit),
        **{k: call.get(k) for k in ("error", "ids", "duration_s")},
    }
    return cast(CallRecord, scrubbed(record))  # the same keys, every string scrubbed


def write_call(
    settings: Settings, call: Mapping[str, Any], arguments: Mapping[str, Any]
) -> CallRecord | None:
    """Append ``call``'s record (readable only by the server's user) when the audit log is
    on; a failure is logged, never raised (the call matters more than its log)."""
    if not settings.files.audit_log:
        return None
    record = call_record(settings, call, arguments)
    line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    path = calls_path(settings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _appending:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
    except OSError as exc:
        log.warning("MCP call not written to the audit log: %s", exc)
        return None
    return record


def list_calls(settings: Settings, person: str | None = None, limit: int = 100) -> list[CallRecord]:
    """The latest ``limit`` calls (of ``person`` only, when given), newest first."""
    try:
        lines = calls_path(settings).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found: list[CallRecord] = []
    for line in reversed(lines):
        if len(found) >= limit:
            break
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(record, dict) and person in (None, record.get("person")):
            found.append(cast(CallRecord, record))  # a line this module wrote
    return found
