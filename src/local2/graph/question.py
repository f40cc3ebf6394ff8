"""Whether a question can be asked: checked once by the service before a turn starts, and
again by ``receive`` for a graph invoked directly (a notebook, LangGraph Server)."""

from __future__ import annotations


def validate_query(query: object, max_chars: int) -> str | None:
    """The reason a question cannot be asked, or None when it is fine."""
    if not isinstance(query, str) or not query.strip():
        return "The question is empty: type something to ask."
    if len(query) > max_chars:
        return (
            f"The question is {len(query)} characters long; the limit is {max_chars} "
            "(generator.max_query_chars)."
        )
    return None
