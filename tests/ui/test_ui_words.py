"""The words the app shows a person for what happened: a rating, a compared pair with the
critic off, the Arena's votes, who graded an eval run and each of its questions, the
document hits, and the notices (their addresses shown, not linked)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import local2.ui._render as render
from local2.contracts import QuestionResult
from local2.ui._arena_tab import summary_of
from local2.ui._compare import answer_card, verdict_text
from local2.ui._documents import document_rows
from local2.ui._eval_chart import QUESTION_COLUMNS, grader_words, progress_bar, question_rows
from local2.ui._header import note
from local2.ui._models import ModelPicker
from local2.ui._ratings import rating_said

INTERNALS = ("→", "engram", "user.feedback", "reward.event", "`")


def test_a_rating_is_said_in_a_persons_words_for_every_outcome() -> None:
    cases = [
        ({"engrams_annotated": 1}, True, "Memory keeps it with this answer"),
        ({"engrams_annotated": None}, True, "the next time it is opened"),
        ({"engrams_annotated": 0}, True, "if it keeps the answer"),
        ({"engrams_annotated": 0}, False, "Memory is off"),
        ({"previous": 2, "engrams_annotated": 1}, True, "from 2/5 to **4/5 (good)**"),
        ({"unchanged": True}, True, "already rated 4/5 (good): nothing new"),
    ]
    for result, memory_on, expected in cases:
        said = rating_said(4, result, memory_on)
        assert expected in said, (result, said)
        assert not [w for w in INTERNALS if w in said], said


def test_with_the_critic_off_a_pair_says_not_graded_and_why() -> None:
    respondent: Any = {"label": "qwen3:4b", "answer": "Paris.", "critique": None}
    card = answer_card("a", respondent, "a", critic=False)
    assert "not graded: the critic is off" in card and "grading" not in card
    assert "grading…" in answer_card("a", respondent, "a", critic=True)  # a grade is coming
    assert verdict_text({}, critic=False) == "**Judge:** not graded: the critic is off"
    judged = verdict_text({"winner": None, "reason": "no parseable choice"}, critic=True)
    assert "no verdict (no parseable choice)" in judged
    assert "not judged" not in verdict_text({"winner": None, "scores": {"a": 3, "b": 4}})


def test_the_arena_counts_votes_and_says_a_model_against_itself_rates_nothing() -> None:
    def vote(voter: str, a: str, b: str) -> Any:
        return SimpleNamespace(voter=voter, model_a=a, model_b=b)

    assert summary_of([]) == "No votes yet: compare two models in the Chat tab."
    said = summary_of([vote("person", "m", "m"), vote("judge", "m", "n")])
    assert said.startswith("1 vote(s) from people, 1 from the judge.")
    assert "1 compared a model with itself, which rates no model" in said
    assert "itself" not in summary_of([vote("person", "m", "n")])


def test_who_graded_a_run_is_named_in_words() -> None:
    assert grader_words("match", None, False) == "word match with the expected answers (no model)"
    assert grader_words("match", None, False, brief=True) == "word match (no model)"
    assert grader_words("gemma4:12b", "ollama", True) == "the model that answered"
    assert grader_words("gemma4:12b", "ollama", False) == "gemma4:12b (ollama)"
    assert "None" not in grader_words("qwen3:4b", None, False)


def result(**fields: Any) -> QuestionResult:
    base: dict[str, Any] = {
        "id": "mill-built",
        "question": "In what year was the Saltmere Tidal Mill built?",
        "gold": ["1781"],
        "answer": "It was built in 1781.",
        "grade": "correct",
        "grader_reasoning": "",
        "grader_problem": None,
        "exact_match": False,
        "f1": 0.4,
        "contains_gold": True,
        "evidence": {"found": 1, "total": 1},
        "diagnosis": None,
        "tools": [],
        "time_s": 1.23,
        "tokens": None,
        "session_id": "s-1",
        "error": None,
        "recorded_at": 0.0,
    }
    return base | fields  # type: ignore[return-value]  # a QuestionResult, field by field


def test_an_eval_question_row_shows_question_expected_answer_and_grade() -> None:
    [row] = question_rows([result()])
    shown = dict(zip(QUESTION_COLUMNS, row, strict=True))
    assert shown["question"] == "In what year was the Saltmere Tidal Mill built?"
    assert shown["expected"] == "1781" and shown["answer"] == "It was built in 1781."
    assert shown["grade"] == "correct" and shown["session"] == "s-1"  # the session opens
    assert "mill-built" not in row
    [failed] = question_rows([result(error="the model timed out", answer="")])
    assert failed[2] == "(failed: the model timed out)" and failed[3] == "failed"
    [long] = question_rows([result(answer="word " * 400)])
    assert len(long[2]) <= 300 and long[2].endswith("…")


def test_a_finished_runs_bar_does_not_say_done_again() -> None:
    progress: Any = {
        "recorded": 3,
        "errors": 0,
        "total": 3,
        "correct": 1,
        "incorrect": 2,
        "not_attempted": 0,
        "ungraded": 0,
        "eta_s": 0.0,
    }
    finished = progress_bar(progress, finished=True)
    assert "3 of 3" in finished and "done" not in finished and "left" not in finished
    assert "done" not in progress_bar(progress)  # the status line says it, once


def test_document_hits_show_the_passage_that_answers() -> None:
    hit: Any = {
        "document_id": "doc-1",
        "file": "my-documents/mill.pdf",
        "page": 4,
        "unit": "page",
        "score": 0.61234,
        "text": "Lock rope storm town. " * 40 + "The mill was built in 1418.",
        "passage": "… The mill was built in 1418.",
        "found_by": "words #1, meaning #3",
    }
    assert document_rows([hit]) == [
        [
            "my-documents/mill.pdf",
            "page 4",
            "similarity 0.61; words #1, meaning #3",  # why it is first: not its similarity
            "… The mill was built in 1418.",
        ]
    ]
    del hit["passage"], hit["found_by"]  # a turn checkpointed before hits carried them
    assert document_rows([hit])[0][2:] == ["similarity 0.61", hit["text"][:399] + "…"]


def test_notices_show_addresses_as_text_and_the_picker_does_not_repeat_them() -> None:
    said = note("Cannot reach Ollama at http://127.0.0.1:11434. Start it with `ollama serve`.")
    assert said == (
        "**Note:** Cannot reach Ollama at `http://127.0.0.1:11434`. Start it with `ollama serve`."
    )
    banner = render.banner("Search failed at https://example.org/q?x=1, try again.")
    assert "`https://example.org/q?x=1`," in banner
    assert render.unlinked("[docs](https://a.b/c) and <https://d.e>") == (
        "[docs](https://a.b/c) and <https://d.e>"
    )
    problem = "Cannot reach Ollama at http://127.0.0.1:11434."
    alone = ModelPicker([("m — in use", "m")], "m", f"{problem} Start it.", problem)
    assert not alone.worth_showing([f"Using the demo model. {problem} For a real model: ..."])
    assert alone.worth_showing([])  # nothing else says it
    two = ModelPicker([("m", "m"), ("n", "n")], "m", "The models Ollama has.")
    assert two.worth_showing([])  # a choice to make
