"""A run's records added up, and a run folder kept across a kill: a scripted answerer that is
right on a known subset, abstains on another and is wrong on the rest, graded by a scripted
grader, must come out as exactly those counts; a half-written line from a SIGKILL is set
aside and no question is answered twice."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from local2.contracts._evals import QuestionResult
from local2.errors import EvalFileError, InvalidId, UnknownEvalRun
from local2.evals import (
    PROMPT_VERSION,
    EvalRun,
    GraderVerdict,
    Question,
    Reached,
    RunStore,
    answered,
    compare,
    failed,
    grade_answer,
    load_set,
    make_manifest,
    set_path,
    summarize,
)

V = TypeVar("V")
DEMO = load_set(set_path("demo"))
DOCS = {d.id.removeprefix("docs/"): d.text for d in DEMO.documents}
RIGHT = {q.id for q in DEMO.questions[:12]}  # answered with the gold answer
ABSTAIN = {q.id for q in DEMO.questions[12:19]}  # "I do not know"
WRONG_READ = {q.id for q in DEMO.questions[19:25]}  # wrong, with its documents in front of it
# the last five: wrong, never given their documents


class RuleGrader:
    """A scripted grader: reads the gold and the answer out of the prompt and replies as a
    careful judge would (the prompt's own fences)."""

    def __init__(self) -> None:
        self.asked = 0

    def ask(
        self,
        prompt: str,
        parse: Callable[[str], V],
        nudge: str,
        nothing: V,
        parsed: Callable[[V], bool],
    ) -> V:
        self.asked += 1
        gold = prompt.split("<gold_answer>\n")[1].split("\n</gold_answer>")[0]
        answer = prompt.split("<answer>\n")[1].split("\n</answer>")[0]
        golds = [g.removeprefix("- ") for g in gold.split("\n")]
        if "do not know" in answer:
            return parse("It declines.\nGRADE: NOT_ATTEMPTED")
        if any(g.lower() in answer.lower() for g in golds):
            return parse("Same answer.\nGRADE: CORRECT")
        return parse("Another answer.\nGRADE: INCORRECT")


def scripted_answer(q: Question) -> tuple[str, list[Reached]]:
    docs = [Reached("tool:web_fetch", DOCS[n]) for n in q.meta["documents"].split()]
    if q.id in RIGHT:
        return f"The answer is {q.answers[0]}.", docs
    if q.id in ABSTAIN:
        return "I do not know.", []
    if q.id in WRONG_READ:
        return "It was Zanzibar.", docs
    return "It was Zanzibar.", [Reached("tool:web_search", "Nothing about it.")]


def run_demo(grader: RuleGrader) -> list[QuestionResult]:
    records = []
    for q in DEMO.questions:
        answer, reached = scripted_answer(q)
        verdict = grade_answer(grader, q.question, q.answers, answer)
        records.append(answered(q, answer, verdict, reached, tools=["web_search"], time_s=1.5))
    return records


def test_the_harness_reports_exactly_what_the_scripted_answerer_did() -> None:
    grader = RuleGrader()
    summary = summarize(run_demo(grader), questions=30)
    assert grader.asked == 30
    assert (summary["recorded"], summary["graded"], summary["errors"]) == (30, 30, 0)
    assert (summary["correct"], summary["not_attempted"], summary["incorrect"]) == (12, 7, 11)
    assert summary["accuracy"]["k"] == 12 and summary["accuracy"]["n"] == 30
    assert summary["attempted_accuracy"]["n"] == 23
    assert summary["diagnosis"] == {"never_found": 12, "partly_found": 0, "found_misread": 6}
    # Evidence reached: the 12 right and 6 misread questions had all their gold sentences.
    gold_items = {q.id: len(q.evidence) for q in DEMO.questions}
    reached = sum(gold_items[i] for i in RIGHT | WRONG_READ)
    evidence = summary["evidence_recall"]
    assert evidence is not None
    assert (evidence["k"], evidence["n"]) == (reached, sum(gold_items.values()))
    assert summary["mean_time_s"] == 1.5


def test_disagreements_between_the_grader_and_the_string_match_are_listed() -> None:
    mill = ("When was the mill built?", ("1781",))
    records = [
        answered(Question("agree", *mill), "In 1781.", GraderVerdict("correct"), []),
        answered(Question("lenient", *mill), "In the late 1700s.", GraderVerdict("correct"), []),
        answered(
            Question("strict", "Which river?", ("Aun",)),
            "Not the Aun but the Lisk.",
            GraderVerdict("incorrect"),
            [],
        ),
        answered(Question("ungraded", *mill), "1781", GraderVerdict(None, "", "no grade"), []),
        failed(Question("failed", *mill), "model error"),
    ]
    summary = summarize(records, questions=5)
    assert summary["disagreements"] == ["lenient", "strict"]
    assert (summary["graded"], summary["ungraded"], summary["errors"]) == (3, 1, 1)
    assert summary["exact_match"]["n"] == 4 and summary["contains_gold"]["k"] == 3


def test_a_question_recorded_again_counts_once_with_its_last_record() -> None:
    q = Question("q", "Q?", ("x",))
    records = [failed(q, "model unavailable"), answered(q, "x", GraderVerdict("correct"), [])]
    summary = summarize(records, questions=1)
    assert (summary["recorded"], summary["errors"], summary["correct"]) == (1, 0, 1)
    summary = summarize(records[:1], questions=1)
    assert (summary["recorded"], summary["errors"], summary["graded"]) == (1, 1, 0)
    assert summary["accuracy"]["n"] == 0


def test_two_runs_compare_on_the_questions_both_graded() -> None:
    qs = [Question(f"q{i}", "Q?", ("x",)) for i in range(12)]

    def run(right: set[int], skip: int | None = None) -> list[QuestionResult]:
        return [
            answered(
                q,
                "x" if i in right else "y",
                GraderVerdict("correct" if i in right else "incorrect"),
                [],
            )
            for i, q in enumerate(qs)
            if i != skip
        ]

    a = run({0, 1, 2, 3}, skip=11)
    b = run({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11})
    result = compare(a, b, "small", "large")
    assert result["paired"] == 11  # q11 was not graded in run A
    assert (result["both_correct"], result["only_a"], result["only_b"]) == (4, 0, 6)
    assert result["p_value"] == pytest.approx(2 / 64)
    assert result["verdict"] == "b"
    assert result["wording"].startswith("large answers more questions correctly than small")


# -- the run folder ------------------------------------------------------------------------


def new_run(tmp_path: Path, questions: list[Question] | None = None) -> tuple[RunStore, EvalRun]:
    store = RunStore(tmp_path / "evals")
    chosen = questions or list(DEMO.questions)
    manifest = make_manifest(
        DEMO,
        chosen,
        mode="ask",
        model="gemma4:12b",
        backend="ollama",
        grader_model="gemma4:12b",
        grader_backend="ollama",
        settings={"search": "corpus"},
        seed=3,
        run_id="eval-test-1",
        now=1000.0,
    )
    return store, store.create(manifest)


def test_a_run_folder_keeps_its_manifest_and_lists_newest_first(tmp_path: Path) -> None:
    store, run = new_run(tmp_path)
    manifest = run.manifest()
    assert manifest["grader"]["is_answerer"] is True
    assert manifest["grader"]["prompt_version"] == PROMPT_VERSION
    assert "GRADE: NOT_ATTEMPTED" in manifest["grader"]["prompt"]
    assert manifest["set"]["name"] == "demo" and manifest["set"]["documents"] == 32
    assert manifest["selection"]["ids"][:2] == [q.id for q in DEMO.questions[:2]]
    later = make_manifest(
        DEMO,
        [],
        mode="research",
        model="m",
        backend="ollama",
        grader_model="judge",
        grader_backend="ollama",
        run_id="eval-test-2",
        now=2000.0,
    )
    assert later["grader"]["is_answerer"] is False
    store.create(later)
    run.update(status="done")
    assert [m["run_id"] for m in store.manifests()] == ["eval-test-2", "eval-test-1"]
    assert store.open("eval-test-1").manifest()["status"] == "done"
    with pytest.raises(UnknownEvalRun):
        store.open("eval-nope")
    with pytest.raises(InvalidId):
        store.open("../etc")
    with pytest.raises(EvalFileError, match="exists already"):
        store.create(later)


def test_results_append_read_back_and_export_as_csv(tmp_path: Path) -> None:
    _, run = new_run(tmp_path)
    records = run_demo(RuleGrader())
    for record in records:
        run.append(record)
    assert run.results() == records
    assert run.done() == {q.id for q in DEMO.questions}
    rows = list(csv.DictReader(run.export_csv().open(encoding="utf-8")))
    assert len(rows) == 30 and rows[0]["id"] == DEMO.questions[0].id
    assert rows[0]["grade"] == "correct" and rows[0]["evidence_found"] == "1"


def test_csv_cells_a_spreadsheet_would_run_are_quoted(tmp_path: Path) -> None:
    _, run = new_run(tmp_path)
    q = Question("q", '=HYPERLINK("http://x")', ("-1",))
    run.append(answered(q, "@SUM(A1)", GraderVerdict("incorrect"), []))
    [row] = list(csv.DictReader(run.export_csv(tmp_path / "out.csv").open(encoding="utf-8")))
    assert (row["question"], row["gold"], row["answer"]) == (
        '\'=HYPERLINK("http://x")',
        "'-1",
        "'@SUM(A1)",
    )


def test_a_failed_question_is_asked_again_and_a_bad_line_is_named(tmp_path: Path) -> None:
    _, run = new_run(tmp_path)
    q1, q2 = DEMO.questions[:2]
    run.append(failed(q1, "the model server did not answer"))
    run.append(answered(q2, "x", GraderVerdict("incorrect"), []))
    assert run.done() == {q2.id}
    with run.results_path.open("ab") as out:
        out.write(b"{broken}\n")
    with pytest.raises(EvalFileError) as caught:
        run.records()
    assert str(caught.value) == f"{run.results_path}: line 3 is not JSON"
    assert "asked again when the run resumes" in caught.value.fix


KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from local2.evals import EvalRun, GraderVerdict, answered, load_set, set_path

    run = EvalRun(Path(sys.argv[1]))
    questions = load_set(set_path("demo")).questions
    for q in questions[:7]:
        run.append(answered(q, "an answer", GraderVerdict("incorrect"), []))
    # The eighth question's line is half written when the process is killed.
    with run.results_path.open("ab") as out:
        out.write(b'{"id": "' + questions[7].id.encode() + b'", "question": "Wh')
        out.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_a_run_killed_mid_line_resumes_without_answering_a_question_twice(
    tmp_path: Path,
) -> None:
    _, run = new_run(tmp_path)
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(run.folder)])
    assert done.returncode == -signal.SIGKILL
    assert not run.results_path.read_bytes().endswith(b"\n")  # the kill left half a line
    resumed = EvalRun(run.folder)
    assert resumed.done() == {q.id for q in DEMO.questions[:7]}
    asked = [q for q in DEMO.questions if q.id not in resumed.done()]
    assert asked[0] == DEMO.questions[7] and len(asked) == 23
    for q in asked:
        resumed.append(answered(q, "again", GraderVerdict("correct"), []))
    lines = run.results_path.read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]  # every line is whole JSON again
    assert sorted(ids) == sorted(q.id for q in DEMO.questions) and len(ids) == 30
    summary = summarize(resumed.records(), questions=30)
    assert (summary["incorrect"], summary["correct"]) == (7, 23)


def test_a_broken_manifest_is_named_not_taken_for_no_run(tmp_path: Path) -> None:
    _, run = new_run(tmp_path)
    (run.folder / "manifest.json").write_text("{not json")
    with pytest.raises(EvalFileError, match=r"manifest\.json: cannot be read"):
        run.manifest()
