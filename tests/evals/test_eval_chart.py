"""What the Evaluate tab draws: the chart's points (the newest graded run of the set per
model, provider and mode, with its Wilson interval), the progress bar, and the grader that
is no model."""

from __future__ import annotations

import json
from typing import Any

from local2.evals import match_grade, rate
from local2.ui._eval_chart import accuracy_chart, chart_points, progress_bar


def row(run: str, model: str, k: int, n: int, **fields: Any) -> dict[str, Any]:
    return {
        "run_id": run,
        "set": "demo",
        "mode": "ask",
        "model": model,
        "backend": "ollama",
        "provider": "corpus",
        "grader": model,
        "grader_is_answerer": True,
        "accuracy": rate(k, n),
        **fields,
    }


def test_each_model_provider_and_mode_is_charted_once_from_its_newest_graded_run() -> None:
    rows = [  # newest first, as Evals.runs lists them
        row("r5", "qwen3:4b", 0, 0),  # nothing graded yet: not charted
        row("r4", "gemma4:12b", 61, 100),
        row("r3", "gemma4:12b", 10, 100),  # older: replaced by r4
        row("r2", "gemma4:12b", 3, 4, mode="research"),
        row("r1", "qwen3:4b", 7, 30, set="other"),  # another set
    ]
    points = chart_points(rows, "demo")
    assert [(p["run"], p["label"]) for p in points] == [
        ("r4", "gemma4:12b (ollama) · corpus · ask"),
        ("r2", "gemma4:12b (ollama) · corpus · research"),
    ]
    assert points[0]["accuracy"] == 61.0
    assert (points[0]["low"], points[0]["high"]) == (51.2, 69.98)  # Wilson, as statsmodels
    chart = accuracy_chart(rows, "demo")
    assert chart is not None and chart.type == "altair"
    spec = json.loads(chart.plot)
    assert spec["data"]["values"] == points
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "point"]
    assert accuracy_chart(rows, "nothing") is None


def test_the_progress_bar_says_how_far_and_how_long_and_escapes_its_note() -> None:
    progress = {
        "recorded": 13,
        "errors": 1,
        "total": 30,
        "correct": 7,
        "incorrect": 3,
        "not_attempted": 2,
        "ungraded": 0,
        "eta_s": 95.0,
    }
    bar = progress_bar(progress, note="<b>x</b>")
    assert 'aria-valuenow="12"' in bar and "width: 40.0%" in bar
    assert "12 of 30" in bar and "1 failed" in bar and "about 1 min 35 s left" in bar
    assert "&lt;b&gt;x&lt;/b&gt;" in bar and "<b>x" not in bar
    assert progress_bar(None, "Run r1: done.") == '<div id="eval-progress-text">Run r1: done.</div>'


def test_the_match_grader_grades_by_the_gold_answers_words() -> None:
    assert match_grade(["1781"], "It was built in 1781.").grade == "correct"
    assert match_grade(["142 metres", "142 m"], "About 142 m long").grade == "correct"
    assert match_grade(["1781"], "It was built in 17812.").grade == "incorrect"
    assert match_grade(["1781"], "It was built in 1850.").grade == "incorrect"
    for declined in ("I don't know.", "I cannot answer that.", "", "Not sure, sorry"):
        assert match_grade(["1781"], declined).grade == "not_attempted", declined
