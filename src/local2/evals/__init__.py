"""Measuring answers (``local2 eval``, DESIGN §14): question sets, grading, statistics,
evidence recall and run folders, as pure parts the service's runner puts together.

- :mod:`.sets` and :mod:`.readers`: a set read from a path (SimpleQA CSV, JSON lines,
  HotpotQA JSON, a folder of documents with questions), and the questions a run picks;
- :mod:`.grading`: the grader's prompt, its version, and a reply read without guessing;
- :mod:`.scoring`: exact match, token F1 and "contains the gold", SQuAD-normalised;
- :mod:`.evidence`: which gold evidence reached the model, and why a wrong answer was wrong;
- :mod:`.stats`: Wilson intervals, exact McNemar, and words that never call noise a win;
- :mod:`.results`: a question's record, a run's summary, two runs compared;
- :mod:`.store`: run folders (manifest, results JSON lines, CSV), safe to resume.

The shipped demo set (``demo/``) is a folder set: ``load_set(set_path("demo"))``.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Asker": "local2.evals.grading",
    "DEMO": "local2.evals.sets",
    "DEMO_PATH": "local2.evals.sets",
    "EvalRun": "local2.evals.store",
    "GraderVerdict": "local2.evals.grading",
    "NUDGE": "local2.evals.grading",
    "PROMPT": "local2.evals.grading",
    "PROMPT_VERSION": "local2.evals.grading",
    "Paired": "local2.evals.stats",
    "Question": "local2.evals.sets",
    "QuestionSet": "local2.evals.sets",
    "Reached": "local2.evals.evidence",
    "RunStore": "local2.evals.store",
    "answered": "local2.evals.results",
    "best_f1": "local2.evals.scoring",
    "compare": "local2.evals.results",
    "contains_gold": "local2.evals.scoring",
    "correctness": "local2.evals.results",
    "diagnose": "local2.evals.evidence",
    "disagrees": "local2.evals.results",
    "evidence_recall": "local2.evals.evidence",
    "exact_match": "local2.evals.scoring",
    "failed": "local2.evals.results",
    "format_of": "local2.evals.sets",
    "grade_answer": "local2.evals.grading",
    "grade_prompt": "local2.evals.grading",
    "latest": "local2.evals.results",
    "load_set": "local2.evals.readers",
    "make_manifest": "local2.evals.store",
    "mcnemar_exact": "local2.evals.stats",
    "new_run_id": "local2.evals.store",
    "normalize_answer": "local2.evals.scoring",
    "pair": "local2.evals.stats",
    "parse_grade_reply": "local2.evals.grading",
    "rate": "local2.evals.stats",
    "reached_from_turn": "local2.evals.evidence",
    "say_difference": "local2.evals.stats",
    "say_rate": "local2.evals.stats",
    "select": "local2.evals.sets",
    "set_path": "local2.evals.sets",
    "summarize": "local2.evals.results",
    "token_f1": "local2.evals.scoring",
    "wilson": "local2.evals.stats",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "DEMO",
    "DEMO_PATH",
    "NUDGE",
    "PROMPT",
    "PROMPT_VERSION",
    "Asker",
    "EvalRun",
    "GraderVerdict",
    "Paired",
    "Question",
    "QuestionSet",
    "Reached",
    "RunStore",
    "answered",
    "best_f1",
    "compare",
    "contains_gold",
    "correctness",
    "diagnose",
    "disagrees",
    "evidence_recall",
    "exact_match",
    "failed",
    "format_of",
    "grade_answer",
    "grade_prompt",
    "latest",
    "load_set",
    "make_manifest",
    "mcnemar_exact",
    "new_run_id",
    "normalize_answer",
    "pair",
    "parse_grade_reply",
    "rate",
    "reached_from_turn",
    "say_difference",
    "say_rate",
    "select",
    "set_path",
    "summarize",
    "token_f1",
    "wilson",
]
