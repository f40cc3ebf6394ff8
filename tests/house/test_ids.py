"""The session-id rule: what passes, what is refused, and that the message names the rule."""

import pytest

from local2.errors import InvalidId
from local2.ids import SESSION_ID_RULE, check_session_id, session_id_problem


@pytest.mark.parametrize("ok", ["a", "abc-DEF_12.3", "x" * 128, "0f3a9c2e1b7d4e6f"])
def test_valid_ids_pass_unchanged(ok: str) -> None:
    assert check_session_id(ok) == ok
    assert session_id_problem(ok) is None


@pytest.mark.parametrize(
    "bad", ["", ".", "..", "team/alice", "../../x", "..\\..\\x", "a b", "x" * 129, "é", None, 3]
)
def test_invalid_ids_are_refused_with_the_rule(bad: object) -> None:
    with pytest.raises(InvalidId) as info:
        check_session_id(bad)
    assert SESSION_ID_RULE in str(info.value)
