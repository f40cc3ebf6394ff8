"""Comparing two models in the app, and the critic in the loop (docs/architecture.md, "A turn's
path").

- Under the question: a "Compare" switch, the second model (a picker of the models the
  Ollama server has, or any name typed) and its temperature. With it on, both answer.
- Under the chat, for a compared turn: both answers side by side with their grades, the
  judge's verdict, and "A is better / Tie / B is better". The chat shows the answer the
  conversation continues from (A until the person prefers B); a preference redraws it.
- After a low grade: "Try again with the critic's feedback"; the second attempt streams into
  the chat like a turn, and "Show attempt 1 / 2" switches which one the conversation keeps.

All model text is shown through :func:`neutralise`, like every answer in the app.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr

import local2.ui._render as render
from local2.contracts import NO_OPTIONS, PairwiseVerdict, RespondentAnswer, TurnOptions
from local2.errors import InvalidInput, Local2Error
from local2.graph import turn_payload
from local2.service import Agent
from local2.ui._base import UIPart
from local2.ui._models import ModelPicker
from local2.ui._safe_markdown import neutralise
from local2.ui._updates import Updates

PREFER_LABELS = {"a": "A is better", "tie": "Tie", "b": "B is better"}
VERDICTS = {"a": "A is better", "b": "B is better", "tie": "a tie (the two orders disagreed)"}


CRITIC_OFF = "not graded: the critic is off"


def answer_card(rid: str, respondent: RespondentAnswer, shown: str, critic: bool = True) -> str:
    grade = render.critique_text(respondent.get("critique")) or (
        "_Critic: grading…_" if critic else f"_Critic: {CRITIC_OFF}._"
    )
    name = neutralise(str(respondent.get("label") or respondent.get("model")))
    head = f"**{rid.upper()} · {name}**"
    if rid == shown:
        head += " · continues the conversation"
    if error := respondent.get("error"):
        body = f"**No answer:** {neutralise(render.short(error, 400))}"
    else:
        body = neutralise(str(respondent.get("answer") or ""))
    tools = [c.get("tool") for c in respondent.get("tool_calls") or []]
    used = f"\n\n_Tools: {', '.join(map(str, tools))}_" if tools else ""
    return f"{head}\n\n{body}{used}\n\n{grade}"


JUDGING = "**Verdict:** the judge is comparing the two answers…"


def judged(pairwise: Mapping[str, Any]) -> bool:
    """Whether the judge has compared the pair (a verdict, or why it gave none)."""
    return any(pairwise.get(k) for k in ("winner", "reason", "scores", "verdicts"))


def verdict_text(pairwise: PairwiseVerdict, judging: bool = False, critic: bool = True) -> str:
    if judging and not judged(pairwise):  # the answers are out, the judge still at work
        return JUDGING
    if not critic and not judged(pairwise):  # nobody was asked: say so, and why
        line = f"**Judge:** {CRITIC_OFF}"
    else:
        winner = pairwise.get("winner")
        why = pairwise.get("reason") or "the judge gave no choice"
        judge = VERDICTS.get(winner or "", f"no verdict ({why})")
        line = f"**Judge (asked twice, order swapped):** {judge}"
    scores = pairwise.get("scores") or {}
    if scores:
        line += f" · grades A {scores.get('a')}/5, B {scores.get('b')}/5"
    preferred = pairwise.get("preferred")
    if preferred:
        line += f"  \n**You:** {PREFER_LABELS[preferred]}"
    return line


class ComparePanel(UIPart):
    """The compare switch, the side-by-side answers and the retry row: what a turn asks of
    them and how they show its result (the chat draws them; :class:`CompareActions` acts)."""

    def __init__(self, agent: Agent, picker: ModelPicker) -> None:
        super().__init__(agent)
        self.picker = picker

    def build_controls(self) -> None:
        default = self.agent.turns.compare_default  # serve --model-b: compare unless switched off
        asked: Mapping[str, Any] = default or {}
        with gr.Row(equal_height=True, elem_id="local2-compare-row"):
            self.compare_on = gr.Checkbox(
                value=default is not None,
                label="Compare with a second model",
                scale=1,
                min_width=160,
                elem_id="local2-compare",
            )
            self.model_b = gr.Dropdown(
                choices=list(self.picker.choices),  # the models Ollama has (local2.ui._models)
                value=asked.get("model"),
                label="Model B (blank: the same model)",
                allow_custom_value=True,
                scale=2,
                min_width=160,
                elem_id="local2-model-b",
            )
            # A text box, not gr.Number: a blank number field arrives as 0, not "default".
            temperature = asked.get("temperature")
            self.temperature_b = gr.Textbox(
                value="" if temperature is None else f"{temperature:g}",
                label="Temperature B (0-2; blank: default)",
                placeholder="default",
                scale=1,
                min_width=120,
                elem_id="local2-temperature-b",
            )

    def build_panel(self) -> None:
        self.pair_target = gr.State(None)  # the compared turn's query id
        with gr.Group(visible=False, elem_id="local2-pair") as self.pair_box:
            with gr.Row(equal_height=False):
                self.pair_a = gr.Markdown("", elem_id="local2-answer-a")
                self.pair_b = gr.Markdown("", elem_id="local2-answer-b")
            self.pair_verdict = gr.Markdown("", elem_id="local2-verdict")
            with gr.Row():
                self.prefer_buttons = {
                    choice: gr.Button(label, size="sm", elem_id=f"local2-prefer-{choice}")
                    for choice, label in PREFER_LABELS.items()
                }
        self.retry_target = gr.State(None)  # the query id the retry row is about
        with gr.Group(visible=False, elem_id="local2-retry-box") as self.retry_box:
            self.retry_md = gr.Markdown("", elem_id="local2-retry-note")
            with gr.Row():
                self.retry_btn = gr.Button(
                    "Try again with the critic's feedback", size="sm", elem_id="local2-retry"
                )
                self.show_buttons = {
                    n: gr.Button(f"Show attempt {n}", size="sm", elem_id=f"local2-show-{n}")
                    for n in (1, 2)
                }

    def inputs(self) -> list[Any]:
        return [self.compare_on, self.model_b, self.temperature_b]

    def outputs(self) -> list[Any]:
        return [
            *self.pair_outputs(),
            self.retry_target,
            self.retry_box,
            self.retry_md,
            self.retry_btn,
            *self.show_buttons.values(),
        ]

    def options(
        self, on: bool | None, model: str | None, temperature: str | None
    ) -> tuple[TurnOptions, str | None]:
        """The turn's options and a problem to show instead (a bad temperature, say)."""
        if not on:
            return NO_OPTIONS, None
        text = (temperature or "").strip()
        try:
            value = float(text) if text else None
        except ValueError:
            return (
                NO_OPTIONS,
                f"Temperature B must be a number from 0 to 2, or blank; got {text!r}.",
            )
        try:
            # Compare with nothing changed: the same model again (another sample of it).
            options = self.agent.turns.options((model or "").strip() or None, value, compare=True)
        except InvalidInput as exc:
            return NO_OPTIONS, exc.message
        return options, None

    def compare_hidden(self) -> Updates:
        return {
            self.pair_box: gr.update(visible=False),
            self.retry_box: gr.update(visible=False),
        }

    def done(self, payload: Mapping[str, Any]) -> Updates:
        """The panels for a finished turn: side by side when compared, the retry offer or
        the attempts when graded low."""
        update = self.compare_hidden()
        query_id = payload.get("query_id")
        if payload.get("respondents"):
            update.update(self.pair_view(payload))
        if payload.get("retry"):
            retry = payload["retry"]
            first, second = retry["first"].get("score"), retry["second"].get("score")
            update.update(
                {
                    self.retry_target: query_id,
                    self.retry_box: gr.update(visible=True),
                    self.retry_md: (
                        f"**Two attempts:** the first graded {first}/5, this one {second}/5. "
                        f"The conversation continues from **attempt {retry['shown']}**."
                    ),
                    self.retry_btn: gr.update(visible=False),
                    **{
                        button: gr.update(visible=True, interactive=n != retry["shown"])
                        for n, button in self.show_buttons.items()
                    },
                }
            )
        elif payload.get("retry_offered"):
            score = (payload.get("critique") or {}).get("score")
            update.update(
                {
                    self.retry_target: query_id,
                    self.retry_box: gr.update(visible=True),
                    self.retry_md: f"The critic graded this answer **{score}/5**. The model "
                    "can try again, seeing the critique; both attempts are kept.",
                    self.retry_btn: gr.update(visible=True, interactive=True),
                    **{b: gr.update(visible=False) for b in self.show_buttons.values()},
                }
            )
        return update

    def pair_view(self, payload: Mapping[str, Any]) -> Updates:
        respondents = payload["respondents"]
        pairwise: PairwiseVerdict = payload.get("pairwise") or PairwiseVerdict()
        shown = pairwise.get("shown") or "a"
        critic = self.agent.info.critic
        judging = critic and not judged(pairwise)  # preferring waits for it
        return {
            self.pair_target: payload.get("query_id"),
            self.pair_box: gr.update(visible=True),
            self.pair_a: answer_card("a", respondents["a"], shown, critic),
            self.pair_b: answer_card("b", respondents["b"], shown, critic),
            self.pair_verdict: verdict_text(pairwise, judging=judging, critic=critic),
            **{
                button: gr.update(
                    interactive=not judging and (c == "tie" or bool(respondents[c]["answer"]))
                )
                for c, button in self.prefer_buttons.items()
            },
        }

    def pair_outputs(self) -> list[Any]:
        """What a pair's view draws (:meth:`pair_view`)."""
        return [
            self.pair_target,
            self.pair_box,
            self.pair_a,
            self.pair_b,
            self.pair_verdict,
            *self.prefer_buttons.values(),
        ]

    def pair_graded(self, session_id: str, query_id: str) -> Updates:
        """The side-by-side of ``query_id`` redrawn once its grades and the judge's verdict
        are given (also when they came after the turn's handler stopped following it); no
        change when the session has moved on from it."""

        try:
            view = turn_payload(self.agent.sessions.state(session_id))
        except Local2Error:
            return {}
        if view.get("query_id") != query_id or not view.get("respondents"):
            return {}
        return self.pair_view(view)
