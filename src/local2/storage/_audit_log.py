"""The audit log: one JSON file per turn, ``<data_dir>/runs/<session>/<query_id>.json``.

It records what the turn did (query, model, tool calls with their arguments, the evidence
read, the events, the answer and its critique) so a person can check an answer later,
without becoming a copy of their files or a place secrets leak to: every tool result is
cut to a short preview, and anything that looks like a secret (API keys, tokens, ``sk-...``,
bearer tokens, ``KEY=VALUE`` credentials, private keys, the values of secret-named
environment variables) is replaced by ``[REDACTED]`` everywhere in the record.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2 import events
from local2.contracts import WEB_FETCH, AuditRun
from local2.ids import session_id_problem

if TYPE_CHECKING:
    from local2.config import Settings

log = logging.getLogger(__name__)

AUDIT_VERSION = 1
REDACTED = "[REDACTED]"
_EVENT_STRING_FACTOR = 4  # event strings may be this many previews long

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL
)
_TOKENS = [
    re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic (sk-ant-...), many others
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),  # Google API keys
    re.compile(r"\btvly-[A-Za-z0-9_-]{16,}"),  # Tavily
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),  # JWT
]
_SECRET_NAME = (
    r"(?:API[_-]?KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PWD|CREDENTIALS?"
    r"|PRIVATE[_-]?KEY|ACCESS[_-]?KEY|AUTH)"
)
# NAME=value, NAME: value, "name": "value", export NAME='value' (the name is kept).
_KEY_VALUE = re.compile(
    rf"(?i)\b([A-Za-z0-9_.-]*{_SECRET_NAME}[A-Za-z0-9_.-]*)"
    r"([\"']?\s*[=:]\s*[\"']?)"
    r"(?!\[REDACTED)([^\s\"',;#]{4,})"
)
_SECRET_ENV = re.compile(rf"(?i){_SECRET_NAME}")


def _env_secrets() -> list[str]:
    """Values of secret-looking environment variables, longest first (replaced verbatim)."""
    values = {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact_secrets(text: str, env_values: list[str] | None = None) -> str:
    """``text`` with every secret-looking string replaced by ``[REDACTED]``."""
    for value in _env_secrets() if env_values is None else env_values:
        text = text.replace(value, REDACTED)
    text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    for pattern in _TOKENS:
        text = pattern.sub(REDACTED, text)
    return _KEY_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def preview(text: str, limit: int) -> str:
    """The first ``limit`` characters, then how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more chars not logged]"


def _result_preview(tool: str, result: str, limit: int) -> str:
    """A tool result cut to a preview; a read_file evidence header is kept whole."""
    head, sep, body = result.partition("\n---\n")
    if tool == "read_file" and sep and head.startswith("File: ") and len(head) < 1000:
        return f"{head}{sep}{preview(body, limit)}"
    return preview(result, limit)


def _scrub(value: Any, secrets: list[str], limit: int | None = None) -> Any:
    """Redact secrets in every string of a JSON-like value (and cut strings over ``limit``)."""
    if isinstance(value, str):
        text = redact_secrets(value, secrets)
        text = preview(text, limit) if limit is not None else text
        return value if text == value else text  # unchanged: as it was (a CheckedId stays one)
    if isinstance(value, Mapping):
        return {str(k): _scrub(v, secrets, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, secrets, limit) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _scrub(str(value), secrets, limit)


def scrubbed(value: Any, limit: int | None = None) -> Any:
    """``value`` (JSON-like) with every secret redacted and every string over ``limit`` cut,
    as a turn's record has them."""
    return _scrub(value, _env_secrets(), limit)


def _evidence(payload: Mapping[str, Any]) -> list[dict[str, object]]:
    """What the turn read: files (``file.read`` events' fields) and pages fetched."""
    found: list[dict[str, object]] = []
    for entry in payload.get("event_log") or []:
        if entry.get("subject") == events.FILE_READ:
            found.append({"kind": "file", **{k: v for k, v in entry.items() if k != "subject"}})
    for call in payload.get("tool_calls") or []:
        if call.get("tool") == WEB_FETCH and not call.get("error"):
            found.append({"kind": "url", "url": (call.get("args") or {}).get("url")})
    return found


# The record as written (JSON): previews and redacted copies of the payload's own values.
def audit_record(payload: Mapping[str, Any], preview_chars: int = 240) -> dict[str, Any]:
    """The audit record of a turn payload: previews only, secrets redacted."""
    secrets = _env_secrets()
    calls = [
        {
            "tool": call.get("tool"),
            "args": _scrub(call.get("args") or {}, secrets, preview_chars),
            "result_preview": redact_secrets(
                _result_preview(
                    str(call.get("tool")), str(call.get("result") or ""), preview_chars
                ),
                secrets,
            ),
            "result_chars": len(str(call.get("result") or "")),
            "error": _scrub(call.get("error"), secrets),
            "duration_s": call.get("duration_s"),
        }
        for call in payload.get("tool_calls") or []
    ]
    hits = [
        {k: h.get(k) for k in ("id", "similarity", "kind")}
        for h in payload.get("memory_hits") or []
    ]
    record = {
        "version": AUDIT_VERSION,
        "written_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "session_id": payload.get("session_id"),
        "owner": payload.get("owner"),  # who asked: local, or the person signed in
        "query_id": payload.get("query_id"),
        "query": payload.get("query"),
        "model": payload.get("model"),
        "backend": payload.get("backend"),
        "tool_calls": calls,
        "evidence": _evidence(payload),
        "memory_hits": hits,
        "events": _scrub(
            payload.get("event_log") or [], secrets, preview_chars * _EVENT_STRING_FACTOR
        ),
        "answer": payload.get("answer"),
        "critique": payload.get("critique"),
        "error": payload.get("error"),
    }
    scrubbed: dict[str, Any] = _scrub(record, secrets)  # the same keys, values redacted
    return scrubbed


def folder_name(value: Any) -> str:
    """The file or folder name for an id, one-to-one (two ids never share a folder).

    A valid id (``local2.ids``: ``A-Z a-z 0-9 . _ -``, not ``.`` or ``..``) is its own name;
    anything else (which the entry points refuse, but an old record may hold) becomes ``~``
    and the hex of its UTF-8 bytes, or ``~~`` and their SHA-256 when long. ``~`` is not
    allowed in ids, so the two kinds never meet.
    """
    if value is None:
        return "~none"  # 'n' and 'o' are not hex digits
    text = value if isinstance(value, str) else str(value)  # a CheckedId is not checked again
    if session_id_problem(text) is None:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= 100:
        return "~" + raw.hex()
    return "~~" + hashlib.sha256(raw).hexdigest()


def runs_dir(settings: Settings) -> Path:
    return Path(settings.data_dir) / "runs"


def write_audit(settings: Settings, payload: Mapping[str, Any]) -> Path:
    """Write the turn's audit record (atomically, readable only by its owner); its path."""
    record = audit_record(payload, settings.files.audit_preview_chars)
    folder = runs_dir(settings) / folder_name(record["session_id"])
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / f"{folder_name(record['query_id'])}.json"
    _write_atomically(target, record)
    return target


def _write_atomically(target: Path, record: Mapping[str, Any]) -> None:
    """Replace ``target`` with ``record`` at once, readable only by its owner."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".audit-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=False, indent=2, default=str)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def audit_turn(settings: Settings, payload: Mapping[str, Any]) -> Path | None:
    """The agent's hook: write the record when enabled; a failure is logged, never raised."""
    if not settings.files.audit_log or not payload.get("query_id"):
        return None
    try:
        return write_audit(settings, payload)
    except Exception as exc:  # the answer matters more than its log
        log.warning("audit log not written: %s: %s", type(exc).__name__, exc)
        return None


def add_late_grade(
    settings: Settings,
    session_id: str,
    query_id: str,
    critique: Mapping[str, Any],
    entries: list[Mapping[str, Any]],
) -> Path | None:
    """Add a grade given after the turn ended (it gave way to the next question) to the
    turn's record: its ``critique`` and the grade's events. None when there is no record
    (the audit log is off); a failure is logged, never raised."""
    if not settings.files.audit_log:
        return None
    target = runs_dir(settings) / folder_name(session_id) / f"{folder_name(query_id)}.json"
    record = _load(target)
    if record is None:
        return None
    secrets = _env_secrets()
    limit = settings.files.audit_preview_chars * _EVENT_STRING_FACTOR
    record["critique"] = _scrub(dict(critique), secrets)
    record["events"] = [*(record.get("events") or []), *_scrub(list(entries), secrets, limit)]
    try:
        _write_atomically(target, record)
    except OSError as exc:
        log.warning("late grade not added to the audit log: %s", exc)
        return None
    return target


# -- reading --------------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any] | None:  # an audit file's JSON, as it was written
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def list_runs(settings: Settings, session: str | None = None, limit: int = 50) -> list[AuditRun]:
    """Summaries of logged turns, newest first (optionally of one session)."""
    base = runs_dir(settings)
    pattern = f"{folder_name(session)}/*.json" if session else "*/*.json"
    files = sorted(base.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    rows: list[AuditRun] = []
    for path in files[: max(0, limit)]:
        data = _load(path)
        if data is None:
            continue
        critique = data.get("critique") or {}
        rows.append(
            {
                "session_id": data.get("session_id"),
                "query_id": data.get("query_id"),
                "written_at": data.get("written_at"),
                "model": data.get("model"),
                "query": " ".join(str(data.get("query") or "").split())[:100],
                "tools": [c.get("tool") for c in data.get("tool_calls") or []],
                "score": critique.get("score") if isinstance(critique, dict) else None,
                "path": str(path),
            }
        )
    return rows


def find_run(settings: Settings, query_id: str) -> Path | None:
    """The audit file of ``query_id`` (``session/query_id`` also accepted), newest if several."""
    base = runs_dir(settings)
    if "/" in query_id:
        session, _, qid = query_id.partition("/")
        path = base / folder_name(session) / f"{folder_name(qid)}.json"
        return path if path.is_file() else None
    found = sorted(
        base.glob(f"*/{folder_name(query_id)}.json"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    return found[0] if found else None


# an audit file's JSON as it was written (an older version's may have fewer keys)
def show_run(settings: Settings, query_id: str) -> dict[str, Any] | None:
    path = find_run(settings, query_id)
    return None if path is None else _load(path)
