"""A research model for the fake Ollama server: plans, gaps and reports, scripted or rule-made.

It reads the ``format`` schema of each request the way a real model is constrained by it:
a ``ResearchPlan`` schema gets a plan, a ``ResearchGaps`` schema gets follow-up queries, and
a request without one (the report) gets Markdown citing the numbered sources it was shown.
Scripts make it misbehave on purpose: plans that are not JSON or break the rules, and
reports that cite a source that does not exist, state a number no source has, or type a URL.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from local2.retrieval import sentences
from local2_testkit.brains import Reply, RuleBrain, message_text

_SOURCE = re.compile(
    r"^\[(\d+)\] (.+?)\n(.+?)(?=\n\n\[\d+\] |\n\nWrite the report|\Z)", re.M | re.S
)


# an Ollama request body, as a client sent it (JSON)
def _schema_title(request: dict[str, Any]) -> str:
    fmt = request.get("format")
    return str(fmt.get("title", "")) if isinstance(fmt, dict) else ""


# an Ollama request body, as a client sent it (JSON)
def _last_user(request: dict[str, Any]) -> str:
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return message_text(message)
    return ""


_CONTENT = re.compile(r"[A-Za-z]{4,}")


def _lacking(prompt: str) -> list[str]:
    """The follow-up question, when fewer than half its words are in the sources shown."""
    question = prompt.split("Follow-up question:", 1)[-1].split("\n", 1)[0].strip()
    sources = prompt.split("Sources:", 1)[-1].lower()
    words = {w.lower() for w in _CONTENT.findall(question)} - {"what", "does", "when", "which"}
    known = sum(1 for w in words if w in sources)
    return [question] if words and known * 2 < len(words) else []


# a plan as a model writes it (JSON)
def default_plan(question: str, top: int = 2) -> dict[str, Any]:
    """Search the question, read its top results, compose."""
    return {
        "goal": question[:150],
        "steps": [
            {
                "id": "s1",
                "description": "Search for sources",
                "tool": "web_search",
                "args": {"query": question[:100]},
                "requires": [],
            },
            {
                "id": "s2",
                "description": "Read the best results",
                "tool": "web_fetch",
                "args": {"from_step": "s1", "top": top},
                "requires": ["s1"],
            },
            {
                "id": "s3",
                "description": "Write the report",
                "tool": "compose",
                "args": {},
                "requires": ["s2"],
            },
        ],
    }


def first_sentence(text: str) -> str:
    """The source's first full sentence, word for word (so every claim in it is supported),
    as LoCAL2 splits sentences ("Giacomo Feo (c. 1471 – 1495) was ..." is one)."""
    flat = " ".join(text.split())
    found = sentences(flat, capital=True)
    return found[0] if found else flat[:200].strip()


class ResearchBrain:
    """Answers research requests; each script list is used in order, then the rules apply.

    ``plans``: replies to plan requests (a dict is sent as JSON, a string as it is);
    ``gaps``: follow-up queries per round (default: none, so one round; a string is sent as
    it is, e.g. a reply that is not JSON);
    ``extra``: sentences appended to the report (e.g. one citing ``[99]``);
    ``replan_query``: the search a rule-made replan tries instead of the failed one;
    ``missing``: what the sources lack for each follow-up question (default: by rule, the
    question itself when fewer than half its words are in the sources shown, else nothing).
    """

    def __init__(
        self,
        *,
        plans: Iterable[dict[str, Any] | str] = (),  # plans as a model writes them (JSON)
        gaps: Iterable[Sequence[str] | str] = (),
        extra: Sequence[str] = (),
        replan_query: str = "",
        missing: Iterable[Sequence[str]] = (),
    ) -> None:
        self.plans = list(plans)
        self.gaps: list[list[str] | str] = [g if isinstance(g, str) else list(g) for g in gaps]
        self.prompts: dict[str, list[str]] = {}  # the last user message of each request, by kind
        self.missing = [list(m) for m in missing]
        self.extra = list(extra)
        self.replan_query = replan_query
        self.requests: dict[str, int] = {}
        self._lock = threading.Lock()
        self._judge = RuleBrain()

    # an Ollama request body, as a client sent it (JSON)
    def _count(self, kind: str, request: dict[str, Any] | None = None) -> None:
        with self._lock:
            self.requests[kind] = self.requests.get(kind, 0) + 1
            if request is not None:
                self.prompts.setdefault(kind, []).append(_last_user(request))

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        if any("###Response to evaluate" in message_text(m) for m in messages):
            self._count("grade")
            return self._judge(request)
        title = _schema_title(request)
        if title == "ResearchPlan":
            self._count("plan")
            return self._plan(_last_user(request))
        if title == "ResearchGaps":
            self._count("gaps", request)
            with self._lock:
                gaps = self.gaps.pop(0) if self.gaps else []
            if isinstance(gaps, str):
                return Reply(content=gaps)
            return Reply(content=json.dumps({"gaps": [{"query": g} for g in gaps]}))
        if title == "ResearchFollowup":
            self._count("followup")
            with self._lock:
                scripted = self.missing.pop(0) if self.missing else None
            lacking = scripted if scripted is not None else _lacking(_last_user(request))
            return Reply(content=json.dumps({"gaps": [{"query": g} for g in lacking]}))
        self._count("compose", request)
        return Reply(thinking="I write from the numbered sources.", content=self._report(request))

    def _plan(self, prompt: str) -> Reply:
        with self._lock:
            scripted = self.plans.pop(0) if self.plans else None
        if scripted is not None:
            return Reply(content=scripted if isinstance(scripted, str) else json.dumps(scripted))
        question = prompt.split("\n", 1)[0].removeprefix("Question: ").strip()
        if "failed and are forbidden" in prompt:
            query = self.replan_query or f"{question} overview"
            return Reply(content=json.dumps(default_plan(query)))
        missing = re.findall(r"^- (.+)$", prompt.split("Still missing, search for:")[-1], re.M)
        if "Still missing" in prompt and missing:
            return Reply(content=json.dumps(default_plan(missing[0], top=1)))
        return Reply(content=json.dumps(default_plan(question)))

    # an Ollama request body, as a client sent it (JSON)
    def _report(self, request: dict[str, Any]) -> str:
        prompt = _last_user(request)
        body = prompt.split("Sources:", 1)[-1]
        lines = []
        for number, title, text in _SOURCE.findall(body):
            text = text.strip()
            if text.startswith(title.strip()):  # the page's text repeats its headline
                text = text[len(title.strip()) :]
            sentence = first_sentence(text)
            if sentence:
                lines.append(f"{sentence} [{number}]")
        if not lines:
            lines.append("The sources found do not answer the question.")
        return "## Findings\n\n" + "\n\n".join(lines + self.extra)
