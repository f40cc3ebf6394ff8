"""The story runner: its checks on crafted payloads, and S1-S4 against a live API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local2.cli._stories import serve_api
from local2.errors import StoryError
from local2.http._app import create_api
from local2.service.agent import Agent
from local2.stories._runner import (
    EventChecks,
    PayloadChecks,
    TurnSpec,
    check_events,
    check_expected_content,
    check_payload,
    check_turn,
    load_stories,
    run_stories,
)
from local2_testkit.brains import Reply
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2, make_settings

STORIES = Path(__file__).parents[1] / "stories"
ROOT = Path(__file__).parents[2]


def payload(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "answer": "The capital of France is Paris.",
        "thinking": "France's capital is a fact I know.",
        "tool_calls": [],
        "events": ["query.received", "response.generation", "answer.dialog"],
    }
    return {**base, **fields}


def s1_turn() -> TurnSpec:
    return next(s for s in load_stories(STORIES) if s.id == "S1").turns[0]


# --------------------------------------------------------------------------- pure checks


def test_s1_accepts_a_good_payload_and_names_each_failure() -> None:
    turn = s1_turn()
    assert check_turn(turn, payload()) == []
    wrong = check_turn(
        turn,
        payload(
            answer="I don't know, maybe Lyon.",
            thinking="  ",
            tool_calls=[{"tool": "web_search"}],
            events=["query.received", "answer.dialog"],
        ),
    )
    text = "\n".join(wrong)
    assert "lacks 'Paris'" in text
    assert 'forbidden "I don\'t know"' in text
    assert "thinking is empty" in text
    assert "tool_calls should be empty" in text and "web_search" in text
    assert "event response.generation missing" in text
    assert "not in order" in text


def test_expected_content_is_case_insensitive_and_lists_are_alternatives() -> None:
    assert check_expected_content("the PARIS answer", ["paris"]) == []
    assert check_expected_content("about the GIL", [["Global Interpreter Lock", "GIL"]]) == []
    failed = check_expected_content("about threads", [["Global Interpreter Lock", "GIL"]])
    assert len(failed) == 1 and "'Global Interpreter Lock' or 'GIL'" in failed[0]


def test_event_checks_present_absent_and_order() -> None:
    spec = EventChecks(
        present=["a", "c"], absent=["x"], in_order=["tool.request.s", "tool.result.s", "c"]
    )
    good = ["a", "tool.request.s", "b", "tool.result.s", "c"]
    assert check_events(spec, good) == []
    swapped = ["a", "tool.result.s", "tool.request.s", "c"]
    assert any("not in order" in f for f in check_events(spec, swapped))
    assert check_events(spec, [*good, "x"]) == ["event x present but should be absent"]
    assert check_events(spec, ["tool.request.s", "tool.result.s", "c"]) == ["event a missing"]


def test_tool_call_checks() -> None:
    searched = payload(tool_calls=[{"tool": "web_search"}])
    need_both = PayloadChecks(
        tool_calls="non_empty", tool_calls_include=["web_search", "web_fetch"]
    )
    assert check_payload(need_both, searched) == ["no web_fetch tool call (got ['web_search'])"]
    both = payload(tool_calls=[{"tool": "web_search"}, {"tool": "web_fetch"}])
    assert check_payload(need_both, both) == []
    assert check_payload(PayloadChecks(tool_calls="non_empty"), payload()) == [
        "tool_calls should not be empty"
    ]
    assert check_payload(PayloadChecks(answer_non_empty=True), payload(answer="")) == [
        "answer is empty"
    ]


def test_the_stories_load_and_a_typo_is_refused(tmp_path: Path) -> None:
    stories = load_stories(STORIES)
    assert [s.id for s in stories] == ["S1", "S2", "S3", "S4"]
    assert len(stories[1].turns) == 2
    assert [s.id for s in load_stories(STORIES, ["s3", "S1"])] == ["S1", "S3"]
    with pytest.raises(StoryError, match="S9"):
        load_stories(STORIES, ["S9"])
    (tmp_path / "bad.yaml").write_text(
        "id: X\nturns:\n  - query: hi\n    expected_contents: [a]\n", encoding="utf-8"
    )
    with pytest.raises(StoryError, match="expected_contents"):
        load_stories(tmp_path)


# --------------------------------------------------------------------------- live runs


def test_a_wrong_model_fails_s1_with_reasons(tmp_path: Path) -> None:
    def lyon(request: dict[str, Any]) -> Reply:
        return Reply(content="It is Lyon, I think.", tool_calls=[])

    with FakeOllama(lyon) as fake:
        settings = make_settings(
            tmp_path, system={"ollama_host": fake.url}, generator={"backend": "ollama"}
        )
        agent = Agent(settings, memory=None)
        try:
            with serve_api(create_api(agent)) as url:
                [result] = run_stories(url, load_stories(STORIES, ["S1"]), timeout_s=60)
        finally:
            agent.close()
    assert result.status == "fail" and result.turns == 1
    reasons = "\n".join(result.reasons)
    assert "lacks 'Paris'" in reasons and "thinking is empty" in reasons
    assert result.answers == ["It is Lyon, I think."]


@pytest.mark.slow
def test_local2_stories_runs_s1_to_s4_against_an_ollama_protocol_model(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as fake:
        env = {"OLLAMA_HOST": fake.url, "LOCAL2_HOME": str(tmp_path / "home")}
        done = local2("stories", "--backend", "ollama", "--json", env=env, cwd=ROOT, timeout=240)
        assert done.returncode == 0, done.stdout + done.stderr
        results = json.loads(done.stdout)
        assert [(r["id"], r["status"]) for r in results] == [
            ("S1", "pass"),
            ("S2", "pass"),
            ("S3", "pass"),
            ("S4", "pass"),
        ]
        # S4's answer can only come from the fetched page, served on loopback.
        assert "Kestrel" in results[3]["answers"][0]
        fetches = [m for r in fake.chat_requests for m in r["messages"] if m.get("role") == "tool"]
        assert any("Kestrel" in str(m.get("content")) for m in fetches)

        table = local2("stories", "--backend", "ollama", "--only", "S1", env=env, cwd=ROOT)
        assert table.returncode == 0, table.stderr
        assert "S1" in table.stdout and "PASS" in table.stdout and "1/1 passed" in table.stdout
    # The in-process run used a throwaway data directory, not the user's.
    assert not (tmp_path / "home" / "checkpoints.sqlite").exists()
