"""What a running turn or research run hands out as it goes: ``(kind, data)`` items.

The kinds are literal, so a reader's ``if kind == "final"`` is checked against them:

- a turn (``agent.turns.stream``): ``event`` (an event-log entry),
  ``thinking`` and ``token`` (text as the model streams it), ``respondent`` (one of two
  respondents' ``{id, kind, text}``), ``answer`` (the payload at publish, before the critic),
  ``approval`` (a tool call waits for the person), ``final`` (the payload at the end);
- a research run (:class:`local2.service.research.Research`): ``run`` (its id, first),
  ``event``, ``report`` (the payload at publish), ``followup`` (a follow-up's answer),
  ``awaiting_input`` (the run pauses for the person: what it waits for) and ``final``;
- an eval run (:class:`local2.service.evals.Evals`): ``run`` (its id and what it asks,
  first), ``progress`` (:class:`~local2.contracts._evals.EvalProgress`) as questions start and
  end, ``question`` (a question's record) and ``final``
  (:class:`~local2.contracts._evals.EvalReport`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from local2.contracts._research import ResearchPayload
    from local2.contracts._turn import TurnPayload

TurnItemKind = Literal["event", "thinking", "token", "respondent", "answer", "approval", "final"]
ResearchItemKind = Literal["run", "event", "report", "followup", "awaiting_input", "final"]
EvalItemKind = Literal["run", "progress", "question", "final"]

StreamItem = tuple[TurnItemKind, Any]
ResearchItem = tuple[ResearchItemKind, Any]
EvalItem = tuple[EvalItemKind, Any]


def collect(
    items: Iterable[tuple[str, Any]], on_item: Callable[[str, Any], None] | None = None
) -> Any:
    """Read a run's items to the end (giving each to ``on_item``); the ``final`` payload."""
    payload: Any = {}
    for kind, data in items:
        if on_item is not None:
            on_item(kind, data)
        if kind == "final":
            payload = data
    return payload


def collect_turn(
    items: Iterable[StreamItem], on_item: Callable[[str, Any], None] | None = None
) -> TurnPayload:
    """:func:`collect` for a turn: its payload."""
    payload: TurnPayload = collect(items, on_item)
    return payload


def collect_research(
    items: Iterable[ResearchItem], on_item: Callable[[str, Any], None] | None = None
) -> ResearchPayload:
    """:func:`collect` for a research run: its payload."""
    payload: ResearchPayload = collect(items, on_item)
    return payload
