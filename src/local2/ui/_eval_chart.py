"""What the Evaluate tab draws: accuracy with its 95 % interval per model, search provider
and mode (a Vega-Lite chart, drawn in the browser by the vega-embed Gradio ships: nothing
is fetched from anywhere), the run's progress bar, and the tables.

Every label is data (a model's or a set's name): Vega-Lite draws it as text, and the
progress bar's only text is numbers and our own words.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gradio.components.plot import PlotData
from typing_extensions import TypedDict

from local2.contracts import EvalProgress, EvalRunRow, QuestionResult
from local2.evals import say_duration, short_rate

CHART_WIDTH = 640  # px of the plot itself (vega-embed cannot size to Gradio's container)
RUN_COLUMNS = [
    "run",
    "status",
    "set",
    "mode",
    "model",
    "search",
    "done",
    "accuracy [95 % CI]",
    "graded by",
]
# The session last: clicking a row opens it. Widths (per cent) in the Evaluate tab's table.
QUESTION_COLUMNS = [
    "question",
    "expected",
    "answer",
    "grade",
    "why not correct",
    "evidence",
    "F1",
    "EM",
    "s",
    "session",
]
QUESTION_WIDTHS: list[str | int] = ["19%", "10%", "27%", "8%", "8%", "8%", "4%", "4%", "4%", "8%"]
RUN_WIDTHS: list[str | int] = ["18%", "7%", "7%", "6%", "15%", "7%", "5%", "14%", "21%"]
MATCH = "match"  # the grader that is no model (an eval stream names it so)
QUESTION_CHARS, GOLD_CHARS, ANSWER_CHARS = 200, 120, 300  # shown of each; the session has all


class ChartPoint(TypedDict):
    """One point of the accuracy chart (a percentage, with its 95 % interval)."""

    label: str
    accuracy: float
    low: float
    high: float
    graded: int
    run: str
    grader: str | None


def grader_words(
    model: str | None, backend: str | None, is_answerer: bool, brief: bool = False
) -> str:
    """Who graded a run, in words: the model that answered (read its grades with care),
    the expected answers' words (no model), or the judge model and where it runs."""
    if is_answerer:
        return "the model that answered"
    if model == MATCH:
        return (
            "word match (no model)" if brief else "word match with the expected answers (no model)"
        )
    return f"{model} ({backend})" if backend else str(model or "?")


def label(row: EvalRunRow) -> str:
    """``gemma4:12b (ollama) · corpus · ask``: one point of the chart."""
    return f"{row['model']} ({row['backend']}) · {row['provider'] or '?'} · {row['mode']}"


def chart_points(rows: Sequence[EvalRunRow], set_name: str) -> list[ChartPoint]:
    """The newest graded run of ``set_name`` for each model, provider and mode."""
    points: dict[str, ChartPoint] = {}
    for row in rows:  # newest first
        acc = row["accuracy"]
        if row["set"] != set_name or not acc["n"] or label(row) in points:
            continue
        points[label(row)] = {
            "label": label(row),
            "accuracy": round(100 * acc["value"], 2),
            "low": round(100 * acc["low"], 2),
            "high": round(100 * acc["high"], 2),
            "graded": acc["n"],
            "run": row["run_id"],
            "grader": grader_words(row["grader"], None, row["grader_is_answerer"]),
        }
    return list(points.values())


def accuracy_chart(rows: Sequence[EvalRunRow], set_name: str) -> PlotData | None:
    """Accuracy (a point) with its 95 % Wilson interval (a line) for each model, provider
    and mode that ran ``set_name``; None when none has a graded answer."""
    points = chart_points(rows, set_name)
    if not points:
        return None
    y = {
        "field": "label",
        "type": "nominal",
        "title": None,
        "sort": None,
        "axis": {"labelLimit": 360},
    }
    x_scale = {"domain": [0, 100]}
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": f"Accuracy on {set_name}, with 95 % intervals",
        "width": CHART_WIDTH,
        "height": {"step": 36},
        "data": {"values": points},
        "layer": [
            {
                "mark": {"type": "rule", "strokeWidth": 3, "color": "#7aa6d6"},
                "encoding": {
                    "y": y,
                    "x": {"field": "low", "type": "quantitative", "scale": x_scale},
                    "x2": {"field": "high"},
                },
            },
            {
                "mark": {"type": "point", "filled": True, "size": 110, "color": "#1f4e8c"},
                "encoding": {
                    "y": y,
                    "x": {
                        "field": "accuracy",
                        "type": "quantitative",
                        "scale": x_scale,
                        "title": "accuracy, % of graded answers",
                    },
                    "tooltip": [
                        {"field": "label", "title": "model · search · mode"},
                        {"field": "accuracy", "title": "accuracy %"},
                        {"field": "low", "title": "95 % low"},
                        {"field": "high", "title": "95 % high"},
                        {"field": "graded", "title": "graded"},
                        {"field": "grader", "title": "grader"},
                        {"field": "run", "title": "run"},
                    ],
                },
            },
        ],
    }
    return PlotData(type="altair", plot=json.dumps(spec))


def progress_bar(p: EvalProgress | None, note: str = "", finished: bool = False) -> str:
    """The run's bar: questions done of all, the grades so far and the time left (none
    once ``finished``: the status line under it says how the run ended)."""
    if p is None:
        return f'<div id="eval-progress-text">{html.escape(note)}</div>' if note else ""
    done = p["recorded"] - p["errors"]
    share = 100 * done / p["total"] if p["total"] else 100.0
    left = "" if finished else f"about {say_duration(p['eta_s'])} left"
    if not finished and done >= p["total"]:
        left = "grading the last answers"
    parts = [
        f"{done} of {p['total']}",
        f"✓ {p['correct']} correct",
        f"✗ {p['incorrect']} incorrect",
        f"– {p['not_attempted']} not attempted",
        f"{p['ungraded']} ungraded" if p["ungraded"] else "",
        f"{p['errors']} failed" if p["errors"] else "",
        left,
        note,
    ]
    text = " · ".join(part for part in parts if part)
    return (
        f'<div class="l2-eval-bar" role="progressbar" aria-valuemin="0" '
        f'aria-valuemax="{p["total"]}" aria-valuenow="{done}">'
        f'<div style="width: {share:.1f}%"></div></div>'
        f'<div id="eval-progress-text">{html.escape(text)}</div>'
    )


def run_rows(rows: Sequence[EvalRunRow]) -> list[list[Any]]:
    table = []
    for r in rows:
        table.append(
            [
                r["run_id"],
                r["status"],
                r["set"],
                r["mode"],
                r["model"],
                r["provider"],
                f"{r['recorded']}/{r['questions']}",
                short_rate(r["accuracy"]),
                grader_words(r["grader"], None, r["grader_is_answerer"], brief=True),
            ]
        )
    return table


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def question_rows(results: Sequence[QuestionResult]) -> list[list[Any]]:
    """Each question as a person checks it: what was asked, what was expected, what came
    back and its grade (then the measures, and the session it opens)."""
    rows = []
    for r in results:
        evidence = r["evidence"]
        answer = f"(failed: {r['error']})" if r["error"] else r["answer"]
        rows.append(
            [
                _cut(r["question"], QUESTION_CHARS),
                _cut(" / ".join(r["gold"]), GOLD_CHARS),
                _cut(answer, ANSWER_CHARS),
                "failed" if r["error"] else (r["grade"] or "ungraded").replace("_", " "),
                (r["diagnosis"] or "").replace("_", " "),
                f"{evidence['found']}/{evidence['total']}" if evidence else "",
                round(r["f1"], 2),
                "✓" if r["exact_match"] else "",
                round(r["time_s"], 1),
                r["session_id"] or "",
            ]
        )
    return rows


def started(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")
