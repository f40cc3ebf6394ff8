"""``local2 research`` asks at the terminal: a clarifying question, and the plan for review.

The plan is shown as its sub-questions (each with its steps) and edited with short commands
(``drop q2``, ``add TEXT``, ``edit q1 TEXT``, ``move q3 1``); an empty line approves it as it
stands (sent as the edited plan when anything changed). ``stop``, at the plan or the question,
ends the run as a running run's Stop does: its report is written from what was read. A
plan that breaks the rules is shown again with the reasons. End of input (Ctrl-D, or no more
lines on a pipe) leaves the run paused, to be answered later (``--resume RUN_ID``, ``--plan
FILE``, ``--answer TEXT``).
A plan file (``--plan FILE``) is JSON (``{subquestions: [{id?, text}]}`` or ``{goal,
steps}``) or text, one sub-question a line (``q2: text`` keeps sub-question q2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from local2.contracts import PlanEdit, ResearchInput, ResearchRequest, SubQuestionEdit

HELP = (
    "Enter approves. Or: drop q2 | add TEXT | edit q1 TEXT | move q3 1 | show | "
    "stop (end the run: report what was read) | Ctrl-D to leave it paused"
)
STOP = "stop"


def read_plan_file(path: Path) -> PlanEdit:
    """A plan from a file: JSON, or one sub-question a line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        return PlanEdit.model_validate(json.loads(text))
    return PlanEdit.from_text(text)


def _readings(request: ResearchRequest) -> list[str]:
    ask = request.get("clarify")
    return list(ask.get("readings") or []) if ask else []


def describe_request(request: ResearchRequest) -> list[str]:
    """Plain lines for the person: the question asked, or the plan with its steps."""
    if request.get("waits_for") == "answer":
        ask = request.get("clarify")
        lines = [f"The question can be read more than one way: {ask['question'] if ask else ''}"]
        lines += [f"  {n}. {r}" for n, r in enumerate(_readings(request), start=1)]
        return lines
    steps = {s["id"]: s for s in request.get("steps") or []}
    lines = ["The plan, before the first search:"]
    for q in request.get("subquestions") or []:
        lines.append(f"  {q['id']}: {q['text']}")
        for step_id in q.get("steps") or []:
            step = steps.get(step_id)
            args = json.dumps((step.get("args") if step else None) or {}, ensure_ascii=False)
            lines.append(f"      {step_id} {(step.get('tool') if step else None) or ''} {args}")
    if request.get("error"):
        lines.append(f"That plan cannot be run: {request['error']}")
    return lines


class PlanEditor:
    """The sub-questions as the person edits them at the terminal."""

    def __init__(self, request: ResearchRequest) -> None:
        self.items = [
            SubQuestionEdit(id=q["id"], text=q["text"]) for q in request.get("subquestions") or []
        ]
        self.changed = False

    def lines(self) -> list[str]:
        return [f"  {n}. {i.id or 'new'}: {i.text}" for n, i in enumerate(self.items, start=1)]

    def _at(self, ref: str) -> int:
        ref = ref.strip().lower()
        for n, item in enumerate(self.items):
            if (item.id or "").lower() == ref or str(n + 1) == ref:
                return n
        raise ValueError(f"no sub-question {ref!r}")

    def command(self, line: str) -> str:
        """Apply one command; what it did (or why it could not)."""
        verb, _, rest = line.strip().partition(" ")
        verb = verb.lower()
        try:
            if verb == "drop":
                gone = self.items.pop(self._at(rest))
                self.changed = True
                return f"dropped {gone.id or gone.text}"
            if verb == "add" and rest.strip():
                self.items.append(SubQuestionEdit(text=rest))
                self.changed = True
                return f"added: {rest.strip()}"
            if verb == "edit":
                ref, _, text = rest.strip().partition(" ")
                n = self._at(ref)
                self.items[n] = SubQuestionEdit(id=self.items[n].id, text=text)
                self.changed = True
                return f"{ref}: {text.strip()}"
            if verb == "move":
                ref, _, where = rest.strip().partition(" ")
                item = self.items.pop(self._at(ref))
                self.items.insert(max(0, int(where) - 1), item)
                self.changed = True
                return f"moved {ref} to {where}"
        except (ValueError, IndexError) as exc:
            return f"not done: {exc}"
        return HELP

    def answer(self) -> ResearchInput:
        if not self.changed:
            return ResearchInput(approve=True)
        return ResearchInput(plan=PlanEdit(subquestions=list(self.items)))


def terminal_answerer(
    ask: Callable[[str], str], show: Callable[[str], None]
) -> Callable[[ResearchRequest], ResearchInput | None]:
    """Answer a paused run at the terminal (None: input ended, leave it paused)."""

    def answer(request: ResearchRequest) -> ResearchInput | None:
        for line in describe_request(request):
            show(line)
        try:
            if request.get("waits_for") == "answer":
                readings = _readings(request)
                reply = ask(
                    "Your answer (a number, your own words, Enter: as written, or stop): "
                ).strip()
                if reply.lower() == STOP:
                    return ResearchInput(stop=True)
                if reply.isdigit() and 1 <= int(reply) <= len(readings):
                    reply = readings[int(reply) - 1]
                return ResearchInput(answer=reply)
            editor = PlanEditor(request)
            show(HELP)
            while True:
                line = ask("plan> ").strip()
                if not line or line.lower() in ("approve", "ok", "y", "yes"):
                    return editor.answer()
                if line.lower() == STOP:
                    return ResearchInput(stop=True)
                if line.lower() == "show":
                    for row in editor.lines():
                        show(row)
                    continue
                show(editor.command(line))
        except (EOFError, KeyboardInterrupt):
            return None

    return answer
