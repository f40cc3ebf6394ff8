"""``local2 chat`` puts the person first (issue 36): the prompt comes back at the answer, not
after the critic's grade, and each grade is shown when it arrives, also one that gave way to
the next question.

A real process on a pseudo-terminal, the real ``ChatOllama`` and critic against the
Ollama-protocol test server, whose judge waits ``JUDGE_DELAY_S`` before replying (a 12B judge
reading a long prompt): that the prompt came back first is a fact read from the server (the
judge had not replied), never a timing assumed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from local2_testkit.ollama_server import FakeOllama
from tests.cli.helpers import Terminal
from tests.people.helpers import FRANCE, GIL, SlowJudge, asked_to_grade, graded, wait_for


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[tuple[Terminal, FakeOllama]]:
    with FakeOllama(SlowJudge()) as fake:
        config = tmp_path / "config"
        config.mkdir()
        (config / "generator.yaml").write_text("backend: ollama\n")
        (config / "memory.yaml").write_text("embedder: lexical\n")
        (config / "web.yaml").write_text("search:\n  provider: mock\n")
        env = {
            "OLLAMA_HOST": fake.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(config),
        }
        term = Terminal([sys.executable, "-m", "local2.cli", "chat"], env)
        try:
            term.expect("you> ", timeout=120)
            yield term, fake
        finally:
            term.close()


def test_chat_gives_the_prompt_back_before_the_grade_and_shows_it_when_it_comes(
    chat: tuple[Terminal, FakeOllama],
) -> None:
    term, fake = chat
    term.type(FRANCE)
    answered = term.expect("you> ")
    assert "The capital of France is Paris." in answered
    assert "Critic:" not in answered
    assert graded(fake, FRANCE, closed=False) == []  # the judge has not replied yet
    shown = term.expect("Critic:")  # at the prompt, once the judge replies
    assert graded(fake, FRANCE, closed=False)  # ... which it now has
    assert "The grade of" not in shown  # the newest turn's grade needs no name
    term.expect("you> ")  # the prompt again, after the grade
    term.type("/exit")
    assert term.proc.wait(60) == 0


def test_a_grade_that_gave_way_to_the_next_question_is_shown_after_it(
    chat: tuple[Terminal, FakeOllama],
) -> None:
    term, fake = chat
    term.type(FRANCE)
    term.expect("you> ")
    wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
    term.type(GIL)  # asked while the judge grades the first answer
    answered = term.expect("you> ")
    assert "GIL" in answered and "Critic:" not in answered
    assert graded(fake, FRANCE, closed=True)  # the judge's request gave way to the question
    grades = term.expect("Critic:") + term.expect("Critic:")  # both, in the order given
    assert f"The grade of “{FRANCE}”" in grades  # named: it is not the newest turn's
    term.type("/exit")
    assert term.proc.wait(60) == 0
