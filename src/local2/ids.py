"""Identifier rules: one documented rule for session ids (and run ids), checked at every entry.

A session id names a LangGraph thread, a folder of the audit log and a path segment of the
HTTP API, so it must survive all three unchanged: 1-128 characters from ``A-Z a-z 0-9 . _
-``, not ``.`` or ``..``. Anything else is refused with :data:`SESSION_ID_RULE` in the
message, never silently rewritten.
"""

from __future__ import annotations

import re
import secrets
import uuid

from local2.errors import InvalidId

SESSION_ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
SESSION_ID_RULE = "1-128 characters from A-Z a-z 0-9 . _ - (not '.' or '..')"
_SESSION_ID = re.compile(SESSION_ID_PATTERN)


def session_id_problem(value: object, what: str = "session id") -> str | None:
    """Why ``value`` is not a valid session id, or None when it is."""
    if not isinstance(value, str) or not _SESSION_ID.fullmatch(value) or value in (".", ".."):
        shown = repr(value) if isinstance(value, str) and len(value) <= 200 else "that value"
        return f"Invalid {what} {shown}: use {SESSION_ID_RULE}."
    return None


def check_session_id(value: object, what: str = "session id") -> str:
    """Return ``value`` if it is a valid session id; raise :class:`InvalidId` otherwise."""
    problem = session_id_problem(value, what)
    if problem or not isinstance(value, str):
        raise InvalidId(problem or f"The {what} must be text.")
    return value


def new_session_id() -> str:
    """A fresh session id (it follows the rule)."""
    return uuid.uuid4().hex


def new_query_id() -> str:
    """A fresh id for one turn of a session."""
    return uuid.uuid4().hex[:12]


def new_run_id() -> str:
    """A fresh research run id (a run's id is its thread's: it follows the session rule)."""
    return uuid.uuid4().hex[:12]


def new_call_id() -> str:
    """An id in the shape tool messages expect, e.g. ``call_1f2e3d4c``."""
    return f"call_{secrets.token_hex(4)}"


DOCUMENT_ID_PATTERN = r"^doc-[0-9a-f]{12}$"
_DOCUMENT_ID = re.compile(DOCUMENT_ID_PATTERN)


def new_document_id() -> str:
    """A fresh id for one of a person's documents, e.g. ``doc-1f2e3d4c5b6a``."""
    return f"doc-{uuid.uuid4().hex[:12]}"


def is_document_id(value: object) -> bool:
    """Whether ``value`` has the shape of a document id (one that has not is no one's)."""
    return isinstance(value, str) and _DOCUMENT_ID.fullmatch(value) is not None
