"""What requests carry: the validated bodies shared by more than one route."""

from __future__ import annotations

from pydantic import Field, field_validator

from local2.ids import SESSION_ID_RULE, session_id_problem


def session_id_rule(value: str | None) -> str | None:
    """A pydantic validator: ``value`` is None or a valid session id."""
    problem = session_id_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


def session_id_field(default: object = ...) -> object:
    """A ``session_id`` field documented with the rule it must follow."""
    return Field(default=default, description=f"Session id: {SESSION_ID_RULE}.")


check_session_id = field_validator("session_id")(session_id_rule)
