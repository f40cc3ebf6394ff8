"""The Research tab's parts for the person to steer a run: its pauses, their says, follow-ups.

- **A pause** (the plan under review, or a clarifying question) shows as an editable plan,
  one sub-question a line (edit, delete, add or reorder lines; ``q2: ...`` keeps q2's steps),
  with **Approve**, or as the question and its readings with **Send**; **Stop and write the
  report** ends the run as a running run's Stop does: it leaves its pause, its report says
  what was read (nothing yet, so it says so) and it is never resumed into a search. A plan
  that breaks the rules is refused with the reasons, and the run stays paused.
- **While it runs**: **Send** a note ("focus on safety, skip pricing"), **Add** it as a
  sub-question, **Stop** or **Drop** a sub-question, or **Stop and write** the report from
  what was read. Each applies at the run's next step boundary and shows in its log.
- **Under the report**: a follow-up question, answered from the run's sources first.

Everything shown that came from the model or a page is plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import gradio as gr

from local2.contracts import (
    STOP_RUN,
    Person,
    PlanEdit,
    ResearchPayload,
    ResearchRequest,
    ShownStep,
)
from local2.errors import Local2Error
from local2.research import link_citations, plain
from local2.ui._notices import notice_for
from local2.ui._safe_markdown import neutralise

if TYPE_CHECKING:
    from local2.service import Research


# Hidden but kept on the page: a part first built hidden is mounted lazily, and updates to it
# while a run streams could be lost (gradio-app/gradio#13494); one kept mounted takes each.
# Gradio 6's gr.Column ignores visible="hidden" (it sets its class `hide` for a false value
# only: every panel showed on a fresh page), so a panel is hidden by the app's CSS class.
HIDE = "l2-hidden"  # display: none (ui/_app.py's CSS)
# What the steering parts show: nothing, the plan or the question of a pause, the says of a
# running run, the follow-ups of a report.
Mode = Literal["idle", "plan", "answer", "running", "reported"]


def picked(sub: str | None) -> tuple[Any, Any]:
    """Stop it and Drop it, shown once there is a sub-question picked for them."""
    return shown(bool(sub)), shown(bool(sub))


def shown(visible: bool) -> Any:
    """A panel's update: shown, or hidden by :data:`HIDE` (and still mounted)."""
    return gr.update(elem_classes=[] if visible else [HIDE])


class InputSent(TypedDict, total=False):
    """What the pause's buttons send the run (checked by the service, as the API's body)."""

    approve: bool
    plan: PlanEdit
    answer: str
    stop: bool


class SaySent(TypedDict, total=False):
    """What the say's buttons send a running run (checked by the service)."""

    text: str
    add: str
    drop: str
    stop: str


def plan_lines(request: ResearchRequest) -> str:
    """The plan under review as the person edits it: one sub-question a line."""
    return "\n".join(f"{q['id']}: {q['text']}" for q in request.get("subquestions") or [])


def pause_markdown(request: ResearchRequest) -> str:
    """What the pause shows: the question and its readings, or each sub-question's steps."""
    if request.get("waits_for") == "answer":
        ask = request.get("clarify")
        question, readings = (ask["question"], ask["readings"]) if ask else ("", [])
        lines = [f"**The question can be read more than one way.** {plain(question)}"]
        lines += [f"{n}. {plain(r)}" for n, r in enumerate(readings or [], start=1)]
        lines.append(
            "Answer with a reading or your own words; an empty answer researches it as written."
        )
        return neutralise("\n\n".join(lines))
    steps = {s["id"]: s for s in request.get("steps") or []}
    lines = ["**The plan, before the first search.** Edit the sub-questions below, then Approve."]
    for q in request.get("subquestions") or []:
        done = ", ".join(f"{i} {_tool(steps, i)}" for i in q.get("steps") or [])
        lines.append(f"- **{q['id']}** {plain(q['text'])} — _{plain(done)}_")
    if request.get("error"):
        lines.append(f"**Not run:** {plain(str(request['error']))}")
    return neutralise("\n".join(lines))


def _tool(steps: Mapping[str | None, ShownStep], step_id: str) -> str:
    step = steps.get(step_id)
    return (step["tool"] if step else None) or ""


def followups_markdown(payload: ResearchPayload) -> str:
    """The follow-ups asked so far, each answer with its citations linked to its sources."""
    parts = []
    for f in payload.get("followups") or []:
        how = (
            "from the sources already read"
            if f.get("from_ledger")
            else ("searched: " + "; ".join(f.get("searched") or []))
        )
        answer = link_citations(str(f.get("answer") or ""), f.get("sources") or [])
        answer = re.sub(r"^#", "###", answer, flags=re.MULTILINE)  # under the report's own
        parts.append(f"_Follow-up {f.get('n')} ({plain(how)})_\n\n{answer}")
    return neutralise("\n\n---\n\n".join(parts))


class ResearchSteer:
    """Mixed into :class:`~local2.ui._research_tab.ResearchTab`: its pause, say and
    follow-up parts, and their handlers."""

    @property
    def research(self) -> Research:
        raise NotImplementedError

    def person(self, request: gr.Request | None) -> Person:
        raise NotImplementedError

    def _follow(
        self, items: Iterator[tuple[str, Any]], question: str | None, person: Person
    ) -> Iterator[dict[Any, Any]]:
        raise NotImplementedError

    @property
    def status_part(self) -> Any:
        """The tab's status line (the tab builds it)."""
        raise NotImplementedError

    def build_pause(self) -> None:
        with gr.Column(elem_classes=[HIDE], elem_id="research-pause") as self.pause_box:
            self.pause_info = gr.Markdown("", elem_id="research-pause-info")
            # Built shown (so mounted: see HIDE), inside the hidden pause; shown by mode.
            with gr.Column() as self.plan_box:
                self.plan_edit = gr.Textbox(
                    label="Sub-questions, one a line: edit, delete, add or reorder lines",
                    lines=5,
                    elem_id="research-plan-edit",
                )
                self.approve = gr.Button("Approve", variant="primary", elem_id="research-approve")
            with gr.Column() as self.question_box:
                self.answer = gr.Textbox(label="Your answer", elem_id="research-answer")
                self.send = gr.Button("Send", variant="primary", elem_id="research-send")
            self.stop_pause = gr.Button(
                "Stop and write the report", variant="stop", elem_id="research-pause-stop"
            )
        self.run_id = gr.State("")
        self.shown_plan = gr.State("")  # the plan as shown: unchanged means approved as is

    def build_steer(self) -> None:
        with gr.Column(elem_classes=[HIDE], elem_id="research-steer") as self.steer_box:
            with gr.Row():
                self.say = gr.Textbox(
                    label="Say something to the run (applied at its next step)",
                    placeholder="e.g. focus on safety, skip pricing",
                    scale=4,
                    elem_id="research-say",
                )
                self.say_send = gr.Button("Send", scale=1, elem_id="research-say-send")
                self.add = gr.Button("Add as sub-question", scale=1, elem_id="research-add")
            with gr.Row() as self.branch_row:  # shown when there is more than one to choose
                self.branch = gr.Dropdown(
                    choices=[],
                    value=None,
                    label="Stop or drop one sub-question",
                    scale=3,
                    allow_custom_value=True,  # an id typed while the list catches up
                    elem_id="research-branch",
                )
                # shown once a sub-question is picked: until then they would act on nothing
                self.stop_branch = gr.Button(
                    "Stop it", scale=1, elem_classes=[HIDE], elem_id="research-stop-branch"
                )
                self.drop_branch = gr.Button(
                    "Drop it", scale=1, elem_classes=[HIDE], elem_id="research-drop-branch"
                )
            self.stop_run = gr.Button(
                "Stop and write the report", variant="stop", elem_id="research-stop"
            )
            self.steer_note = gr.Markdown("", elem_id="research-steer-note")

    def build_followup(self) -> None:
        with gr.Column(elem_classes=[HIDE], elem_id="research-followup-box") as self.followup_box:
            with gr.Row():
                self.followup_q = gr.Textbox(
                    label="Ask a follow-up on this report", scale=5, elem_id="research-followup"
                )
                self.ask = gr.Button("Ask", scale=1, elem_id="research-ask")
            self.followups = gr.Markdown("", elem_id="research-followups")

    def wire_steering(self, outputs: list[Any], limit: int) -> None:
        """The pause's, the says' and the follow-ups' events."""
        self.approve.click(
            self.approve_plan,
            [self.run_id, self.plan_edit, self.shown_plan],
            outputs,
            concurrency_limit=limit,
        )
        self.send.click(
            self.send_answer, [self.run_id, self.answer], outputs, concurrency_limit=limit
        )
        self.stop_pause.click(self.stop_paused, [self.run_id], outputs, concurrency_limit=limit)
        self.ask.click(
            self.ask_followup, [self.run_id, self.followup_q], outputs, concurrency_limit=limit
        )
        notes = [self.steer_note, self.say]
        self.say_send.click(self.say_text, [self.run_id, self.say], notes)
        self.add.click(self.add_sub, [self.run_id, self.say], notes)
        self.stop_branch.click(self.stop_sub, [self.run_id, self.branch], notes)
        self.drop_branch.click(self.drop_sub, [self.run_id, self.branch], notes)
        self.stop_run.click(self.stop_all, [self.run_id], notes)
        self.branch.change(picked, [self.branch], [self.stop_branch, self.drop_branch])

    # -- what the run shows ----------------------------------------------------------------

    def panels(self, mode: Mode, branches: int = 0) -> dict[Any, Any]:
        """Which parts show, all of them on every update of a run: Gradio streams an update
        as the change from the one before, and a part an update leaves out can fall back to
        how it was built, so the panels never depend on an earlier update arriving. Only
        what applies shows: a sub-question to stop or drop when there is more than one
        (``branches`` open)."""
        plan, answer = mode == "plan", mode == "answer"
        return {
            self.pause_box: shown(plan or answer),
            self.plan_box: gr.update(visible=plan),
            self.question_box: gr.update(visible=answer),
            self.steer_box: shown(mode == "running"),
            self.branch_row: gr.update(visible=branches > 1),
            self.followup_box: shown(mode == "reported"),
        }

    def paused(self, request: ResearchRequest) -> tuple[Mode, dict[Any, Any]]:
        """The pause's mode (its plan, or a question) and what it shows."""
        lines = plan_lines(request)
        mode: Mode = "plan" if request.get("waits_for") == "plan" else "answer"
        return mode, {
            self.pause_info: pause_markdown(request),
            self.plan_edit: lines,
            self.shown_plan: lines,
            self.answer: "",
        }

    def branches(self, subquestions: Sequence[Mapping[str, Any]]) -> dict[Any, Any]:
        """The sub-questions there are to stop or drop (the caller picks which)."""
        choices = [(f"{q['id']}: {q['text']}", q["id"]) for q in subquestions]
        return {self.branch: gr.update(choices=choices)}

    def ended(self, payload: ResearchPayload) -> tuple[Mode, dict[Any, Any]]:
        """The follow-ups under a report (none for a run that found no source)."""
        followed = payload.get("report") and payload.get("status") in ("done", "stopped")
        mode: Mode = "reported" if followed else "idle"
        return mode, {self.followups: followups_markdown(payload)}

    # -- handlers --------------------------------------------------------------------------

    def _resume_with(
        self,
        run_id: str,
        value: InputSent,
        request: gr.Request | None,
        mode: Mode,
        notice: Any = None,
    ) -> Iterator[dict[Any, Any]]:
        """Answer the pause with ``value`` and follow the rest of the run; refused, the
        panels of ``mode`` show with the reasons in ``notice`` (default: the pause's)."""
        try:
            person = self.person(request)
            items = self.research.input(run_id, value, person)
        except Local2Error as exc:  # refused: the run stays paused, with the reasons shown
            yield {**self.panels(mode), notice or self.pause_info: notice_for(exc).markdown()}
            return
        yield self.panels("running")
        yield from self._follow(items, None, person)

    def approve_plan(
        self, run_id: str, text: str, shown: str, request: gr.Request | None = None
    ) -> Iterator[dict[Any, Any]]:
        if text.strip() == (shown or "").strip():
            value: InputSent = {"approve": True}
        else:
            try:
                value = {"plan": PlanEdit.from_text(text)}
            except ValueError as exc:
                shown_why = neutralise(f"**Not run:** {plain(str(exc))}")
                yield {**self.panels("plan"), self.pause_info: shown_why}
                return
        yield from self._resume_with(run_id, value, request, "plan")

    def send_answer(
        self, run_id: str, answer: str, request: gr.Request | None = None
    ) -> Iterator[dict[Any, Any]]:
        yield from self._resume_with(run_id, {"answer": answer or ""}, request, "answer")

    def stop_paused(
        self, run_id: str, request: gr.Request | None = None
    ) -> Iterator[dict[Any, Any]]:
        """Stop at a pause: the run writes its report from what was read and ends (refused,
        say when it no longer waits: answered elsewhere, or gone)."""
        yield from self._resume_with(run_id, {"stop": True}, request, "idle", self.status_part)

    def ask_followup(
        self, run_id: str, question: str, request: gr.Request | None = None
    ) -> Iterator[dict[Any, Any]]:
        try:
            person = self.person(request)
            items = self.research.followup(run_id, question or "", person)
        except Local2Error as exc:
            yield {**self.panels("reported"), self.followups: notice_for(exc).markdown()}
            return
        yield {**self.panels("reported"), self.followup_q: ""}
        yield from self._follow(items, None, person)

    def _say(
        self, run_id: str, say: SaySent, request: gr.Request | None, done: str
    ) -> tuple[str, Any]:
        try:
            self.research.steer(run_id, say, self.person(request))
        except Local2Error as exc:
            return notice_for(exc).markdown(), gr.update()
        return done, ""

    def say_text(
        self, run_id: str, text: str, request: gr.Request | None = None
    ) -> tuple[str, Any]:
        return self._say(
            run_id, {"text": text}, request, "Sent: the next plan and the report get it."
        )

    def add_sub(self, run_id: str, text: str, request: gr.Request | None = None) -> tuple[str, Any]:
        return self._say(
            run_id, {"add": text}, request, "Added: it is searched from the next step."
        )

    def stop_sub(self, run_id: str, sub: str, request: gr.Request | None = None) -> tuple[str, Any]:
        return self._say(
            run_id, {"stop": sub or ""}, request, f"Stopping {sub}: what it read is kept."
        )

    def drop_sub(self, run_id: str, sub: str, request: gr.Request | None = None) -> tuple[str, Any]:
        return self._say(
            run_id, {"drop": sub or ""}, request, f"Dropping {sub}: its sources are left out."
        )

    def stop_all(self, run_id: str, request: gr.Request | None = None) -> tuple[str, Any]:
        done = "Stopping: the report is written from what was read."
        note, _ = self._say(run_id, {"stop": STOP_RUN}, request, done)
        return note, gr.update()
