"""A question's record, and a run's records added up: grades, string scores, evidence,
the grader-versus-string-match disagreements, and the comparison of two runs.

Accuracy is correct answers out of graded ones (an answer the grader could not grade, or a
question that failed, is counted apart and never as wrong). Exact match and "contains the
gold" are out of the answered questions.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from local2.contracts import Comparison, QuestionResult, RunSummary, TokenCounts
from local2.evals._evidence import Reached, diagnose, evidence_recall
from local2.evals._grading import GraderVerdict
from local2.evals._scoring import best_f1, contains_gold, exact_match
from local2.evals._sets import Question
from local2.evals._stats import pair, rate, say_difference


def answered(
    question: Question,
    answer: str,
    verdict: GraderVerdict,
    reached: Sequence[Reached],
    *,
    tools: Sequence[str] = (),
    time_s: float = 0.0,
    tokens: TokenCounts | None = None,
    session_id: str | None = None,
    now: float | None = None,
) -> QuestionResult:
    """The record of an answered question: ``reached`` is what the model was given."""
    report = evidence_recall(question.evidence, reached) if question.evidence else None
    return QuestionResult(
        id=question.id,
        question=question.question,
        gold=list(question.answers),
        answer=answer,
        grade=verdict.grade,
        grader_reasoning=verdict.reasoning,
        grader_problem=verdict.problem,
        exact_match=exact_match(answer, question.answers),
        f1=round(best_f1(answer, question.answers), 4),
        contains_gold=contains_gold(answer, question.answers),
        evidence=report,
        diagnosis=diagnose(verdict.grade, report),
        tools=list(tools),
        time_s=round(time_s, 3),
        tokens=tokens,
        session_id=session_id,
        error=None,
        recorded_at=time.time() if now is None else now,
    )


def failed(
    question: Question,
    error: str,
    *,
    time_s: float = 0.0,
    session_id: str | None = None,
    now: float | None = None,
) -> QuestionResult:
    """The record of a question that got no answer (asked again when the run resumes)."""
    return QuestionResult(
        id=question.id,
        question=question.question,
        gold=list(question.answers),
        answer="",
        grade=None,
        grader_reasoning="",
        grader_problem=None,
        exact_match=False,
        f1=0.0,
        contains_gold=False,
        evidence=None,
        diagnosis=None,
        tools=[],
        time_s=round(time_s, 3),
        tokens=None,
        session_id=session_id,
        error=error,
        recorded_at=time.time() if now is None else now,
    )


def latest(records: Iterable[QuestionResult]) -> list[QuestionResult]:
    """The last record of each question, in the order questions were first recorded."""
    by_id: dict[str, QuestionResult] = {}
    for record in records:
        by_id[record["id"]] = record
    return list(by_id.values())


def disagrees(result: QuestionResult) -> bool:
    """The grader and the string match say different things: graded correct without the gold
    in the answer, or graded otherwise with it there."""
    if result["grade"] is None or result["error"] is not None:
        return False
    matched = result["exact_match"] or result["contains_gold"]
    return (result["grade"] == "correct") != matched


def summarize(records: Iterable[QuestionResult], questions: int) -> RunSummary:
    """A run's totals over the last record of each question; ``questions`` were selected."""
    results = latest(records)
    ok = [r for r in results if r["error"] is None]
    graded = [r for r in ok if r["grade"] is not None]
    count = {g: sum(1 for r in graded if r["grade"] == g) for g in _GRADES}
    with_evidence = [r["evidence"] for r in ok if r["evidence"] is not None]
    diagnosis = {d: sum(1 for r in ok if r["diagnosis"] == d) for d in _DIAGNOSES}
    return RunSummary(
        questions=questions,
        recorded=len(results),
        errors=len(results) - len(ok),
        graded=len(graded),
        correct=count["correct"],
        incorrect=count["incorrect"],
        not_attempted=count["not_attempted"],
        ungraded=len(ok) - len(graded),
        accuracy=rate(count["correct"], len(graded)),
        attempted_accuracy=rate(count["correct"], count["correct"] + count["incorrect"]),
        exact_match=rate(sum(1 for r in ok if r["exact_match"]), len(ok)),
        contains_gold=rate(sum(1 for r in ok if r["contains_gold"]), len(ok)),
        f1=sum(r["f1"] for r in ok) / len(ok) if ok else 0.0,
        evidence_recall=(
            rate(sum(e["found"] for e in with_evidence), sum(e["total"] for e in with_evidence))
            if with_evidence
            else None
        ),
        diagnosis=diagnosis,
        disagreements=[r["id"] for r in ok if disagrees(r)],
        mean_time_s=sum(r["time_s"] for r in ok) / len(ok) if ok else 0.0,
    )


_GRADES = ("correct", "incorrect", "not_attempted")
_DIAGNOSES = ("never_found", "partly_found", "found_misread")


def correctness(records: Iterable[QuestionResult]) -> dict[str, bool]:
    """``{question id: graded correct}`` over the graded questions of a run."""
    return {
        r["id"]: r["grade"] == "correct"
        for r in latest(records)
        if r["grade"] is not None and r["error"] is None
    }


def compare(
    a: Iterable[QuestionResult],
    b: Iterable[QuestionResult],
    name_a: str = "A",
    name_b: str = "B",
) -> Comparison:
    """Two runs on the questions both graded: the paired counts and exact McNemar."""
    paired = pair(correctness(a), correctness(b))
    return Comparison(
        paired=paired.n,
        both_correct=paired.both,
        only_a=paired.only_a,
        only_b=paired.only_b,
        neither=paired.neither,
        accuracy_a=paired.accuracy_a,
        accuracy_b=paired.accuracy_b,
        p_value=paired.p_value,
        verdict=paired.verdict(),
        wording=say_difference(paired, name_a, name_b),
    )
