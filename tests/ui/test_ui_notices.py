"""What the app shows for each branch of the error hierarchy (``ui/_notices.py``)."""

from __future__ import annotations

from local2.errors import (
    AwaitingApproval,
    InvalidQuery,
    ModelUnavailable,
    SessionBusy,
    StorageFull,
    TurnCancelled,
    UnknownTurn,
)
from local2.ui._notices import STOPPED, WAITING, notice_for


def test_a_part_to_repair_is_an_error_with_its_fix() -> None:
    for failure in (
        ModelUnavailable("Cannot reach Ollama.", "Start it with: ollama serve"),
        StorageFull("The disk under ~/.local2 is full.", "Free some space."),
    ):
        notice = notice_for(failure)
        assert notice.kind == "error"
        assert (notice.text, notice.fix) == (failure.message, failure.fix)
        assert failure.fix in notice.markdown()


def test_what_the_person_can_do_differently_is_a_warning() -> None:
    for refusal in (
        InvalidQuery("The question is empty."),
        UnknownTurn("No checkpoint 'c9' in this session."),
        SessionBusy("A turn of this session is still running."),
    ):
        notice = notice_for(refusal)
        assert notice.kind == "warning" and notice.text == refusal.message


def test_a_stop_is_a_note_and_a_waiting_turn_says_what_to_do() -> None:
    assert notice_for(TurnCancelled()).kind == "info"
    assert notice_for(TurnCancelled()).text == STOPPED
    waiting = AwaitingApproval({"calls": [{"id": "c1", "tool": "save_memory"}]})
    assert notice_for(waiting).text == WAITING


def test_the_banner_never_renders_what_the_error_quotes() -> None:
    quoted = ModelUnavailable("The model replied ![x](http://evil.example/p.png)", "")
    assert "](http://evil.example" not in notice_for(quoted).markdown()
