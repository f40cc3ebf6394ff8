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


class CheckedId(str):
    """An id known to follow the rule (a session's, a research run's, a turn's): made only
    by :func:`check_session_id` and the ``new_*_id`` functions, so whatever is handed one does
    not check it again. A request's id is checked once, where it comes in (the service, or a
    surface that refuses it before opening anything); everything after passes the
    ``CheckedId`` on (the run, its graph, its audit record). It is a ``str`` in every other
    way: stored, sent and compared as one."""

    __slots__ = ()


def follows_rule(value: object) -> bool:
    """The rule itself: whether ``value`` may be a session id."""
    return (
        isinstance(value, str)
        and _SESSION_ID.fullmatch(value) is not None
        and value not in (".", "..")
    )


def session_id_problem(value: object, what: str = "session id") -> str | None:
    """Why ``value`` is not a valid session id, or None when it is (a :class:`CheckedId`
    was checked when it was made)."""
    if type(value) is CheckedId:
        return None
    if not follows_rule(value):
        shown = repr(value) if isinstance(value, str) and len(value) <= 200 else "that value"
        return f"Invalid {what} {shown}: use {SESSION_ID_RULE}."
    return None


def check_session_id(value: object, what: str = "session id") -> CheckedId:
    """``value`` as a :class:`CheckedId` if it is a valid session id (a ``CheckedId`` is
    returned as it is, unchecked again); raise :class:`InvalidId` with the rule otherwise."""
    if type(value) is CheckedId:
        return value
    problem = session_id_problem(value, what)
    if problem or not isinstance(value, str):
        raise InvalidId(problem or f"The {what} must be text.")
    return CheckedId(value)


def new_session_id() -> CheckedId:
    """A fresh session id (it follows the rule)."""
    return CheckedId(uuid.uuid4().hex)


def new_query_id() -> CheckedId:
    """A fresh id for one turn of a session (it follows the rule: it names a file)."""
    return CheckedId(uuid.uuid4().hex[:12])


def new_run_id() -> CheckedId:
    """A fresh research run id (a run's id is its thread's: it follows the session rule)."""
    return CheckedId(uuid.uuid4().hex[:12])


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
