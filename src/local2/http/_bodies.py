"""What requests carry: the fields shared by more than one body."""

from __future__ import annotations

from pydantic import Field

from local2.ids import SESSION_ID_RULE


def session_id_field(default: object = ...) -> object:
    """A ``session_id`` field documented with the rule it must follow. The rule is checked
    once, by the service the request reaches (a bad id answers 422 with the rule)."""
    return Field(default=default, description=f"Session id: {SESSION_ID_RULE}.")
