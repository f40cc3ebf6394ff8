"""What a research run is doing now, in words for the Research tab's status line.

From the first moment (planning) to the last (checking citations), read off the run's
events: the steps running (searching "...", reading 3 pages, writing the report) and,
between them, what the run does without a step (planning, replanning, looking for gaps).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from local2 import events
from local2.contracts import WEB_SEARCH

COMPOSE = "compose"
PLANNING = "Planning…"
CHECKING = "Checking citations against the sources…"
WRITING = "Writing the report…"
GAPS = "Looking for what is still missing…"
NOTHING_TO_WRITE = "No source was gathered: nothing to write a report from…"


def _quoted(args: Mapping[str, Any]) -> str:
    query = args.get("query")
    return f'"{" ".join(str(query).split())[:80]}"' if query else ""


@dataclass
class Doing:
    """The run's current step, as its events arrive (the steps as the checklist has them)."""

    library: bool = False  # the run reads the person's library only
    between: str = PLANNING  # what the run does when no step runs
    reads: dict[str, set[str]] = field(default_factory=dict)  # step id -> its calls so far
    found: int = 0  # sources its steps have found so far (none: there is nothing to write from)

    # entry: an event entry, its own fields beside subject and t (as local2.events has them)
    def apply(self, entry: Mapping[str, Any], steps: Mapping[str, Mapping[str, Any]]) -> None:
        subject = str(entry.get("subject") or "")
        if subject == events.RESEARCH_PLAN:
            self.between = "Starting the plan…"
        elif subject == events.RESEARCH_REPLAN:
            self.between = "Replanning: a step failed…"
        elif subject == events.RESEARCH_ROUND:
            gaps = entry.get("gaps") or []
            more = gaps and not entry.get("stop")
            next_round = f"Planning round {int(entry.get('n') or 0) + 1}…"
            self.between = next_round if more else (WRITING if self.found else NOTHING_TO_WRITE)
        elif subject == events.RESEARCH_STEP:
            step = steps.get(str(entry.get("id"))) or {}
            if step.get("tool") != COMPOSE and entry.get("status") == "done":
                self.found += int(entry.get("sources") or 0)
            if step.get("tool") == COMPOSE and entry.get("status") == "done":
                self.between = CHECKING
            elif step.get("tool") == COMPOSE and entry.get("status") == "skipped":
                self.between = NOTHING_TO_WRITE  # no source: no model is asked to write
            elif step.get("tool") != COMPOSE and entry.get("status") != "started":
                left = [
                    s
                    for s in steps.values()
                    if s.get("status") == "pending" and s.get("tool") != COMPOSE
                ]
                self.between = "Choosing the next step…" if left else GAPS
        elif subject.startswith(events.TOOL_REQUEST):
            call = str(entry.get("call_id") or "")
            self.reads.setdefault(call.rsplit("-", 1)[0], set()).add(call)

    def now(self, steps: Mapping[str, Mapping[str, Any]]) -> str:
        """The status line's words: the steps running, else what happens between them."""
        running = [s for s in steps.values() if s.get("status") == "running"]
        said = [self._step(s) for s in running]
        if said:
            return "; ".join(dict.fromkeys(said))
        return self.between

    def _step(self, step: Mapping[str, Any]) -> str:
        tool = str(step.get("tool") or "")
        args: Mapping[str, Any] = step.get("args") or {}
        if tool == COMPOSE:
            return WRITING
        if args.get("query"):
            where = " your library for" if self.library else ""
            named = "" if tool == WEB_SEARCH else f" ({tool})"
            return f"Searching{where}{named} {_quoted(args)}…"
        pages = len(self.reads.get(str(step.get("id")), ()))
        if not pages:
            return "Reading…"
        return f"Reading {pages} page{'s' if pages != 1 else ''}…"
