"""What the model is asked at each stage of a research run (plan, replan, reflect, compose).

Prompts are short: the embedded model has a 4096-token context, and the JSON schema sent
with each structured request already fixes the shape of the answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from local2.research.ledger import Source
from local2.research.plan_schema import COMPOSE, FETCH, GOAL_CHARS, SEARCH, TEXT_CHARS


def example_plan(query: str, tools: Sequence[str]) -> dict[str, Any]:
    """A plan for ``query`` itself: a model that copies the example still plans the right
    search (a fixed example about another topic gets copied word for word by small models)."""
    steps: list[dict[str, Any]] = []
    if SEARCH in tools:
        steps.append(
            {
                "id": "s1",
                "description": "Find sources",
                "tool": SEARCH,
                "args": {"query": " ".join(query.split())[:TEXT_CHARS]},
                "requires": [],
            }
        )
    if SEARCH in tools and FETCH in tools:
        steps.append(
            {
                "id": "s2",
                "description": "Read the two best results",
                "tool": FETCH,
                "args": {"from_step": "s1", "top": 2},
                "requires": ["s1"],
            }
        )
    steps.append(
        {
            "id": f"s{len(steps) + 1}",
            "description": "Write the report",
            "tool": COMPOSE,
            "args": {},
            "requires": [steps[-1]["id"]] if steps else [],
        }
    )
    return {"goal": " ".join(query.split())[:GOAL_CHARS], "steps": steps}


_TOOL_HELP = {
    SEARCH: f'- {SEARCH}: args {{"query": ...}}, a few words to search for: finds sources.',
    FETCH: (
        f'- {FETCH}: args {{"url": "https://..."}} to read a page whose address you know, or '
        '{"from_step": "s1", "top": 2} to read the top results of the web_search step s1 '
        "(list s1 in requires)."
    ),
}


def plan_system(tools: Sequence[str], max_steps: int, query: str) -> str:
    helps = [_TOOL_HELP[t] for t in tools if t in _TOOL_HELP]
    return "\n".join(
        [
            "You plan web research that answers a question. Reply with one JSON object only.",
            "Tools:",
            *helps,
            f"- {COMPOSE}: the last step, exactly once, args {{}}: writes the report.",
            f"Rules: at most {max_steps} steps; unique ids; requires lists only earlier steps; "
            "no placeholders; no invented URLs.",
            f"Example: {json.dumps(example_plan(query, tools), ensure_ascii=False)}",
        ]
    )


def _sources_brief(ledger: Sequence[Source], limit: int = 8) -> str:
    lines = [f"[{s['n']}] {s['title']}" for s in ledger[:limit]]
    return "\n".join(lines) or "(none yet)"


def plan_messages(
    question: str,
    tools: Sequence[str],
    max_steps: int,
    gaps: Sequence[str] = (),
    ledger: Sequence[Source] = (),
    done: Sequence[str] = (),
) -> list[BaseMessage]:
    """The first plan, or (with ``gaps``) the plan of a follow-up round."""
    user = f"Question: {question}"
    if gaps:
        user += (
            f"\n\nSources so far:\n{_sources_brief(ledger)}\n\nStill missing, search for:\n"
            + "\n".join(f"- {g}" for g in gaps)
            + f"\n\nPlan only new steps. Finished steps you may build on: {', '.join(done)}."
        )
    example = gaps[0] if gaps else question
    return [SystemMessage(plan_system(tools, max_steps, example)), HumanMessage(user)]


def replan_messages(
    question: str,
    tools: Sequence[str],
    max_steps: int,
    observations: Sequence[str],
    forbidden: Sequence[str],
) -> list[BaseMessage]:
    """A new plan for what is left, after a step failed for good."""
    user = (
        f"Question: {question}\n\nWhat happened so far:\n"
        + "\n".join(f"- {o}" for o in observations)
        + "\n\nThese calls failed and are forbidden (do not plan them again):\n"
        + "\n".join(f"- {f}" for f in forbidden)
        + "\n\nPlan the remaining steps with new ids, ending in compose. You may build on "
        "the finished steps listed above."
    )
    return [SystemMessage(plan_system(tools, max_steps, question)), HumanMessage(user)]


def reflect_messages(question: str, ledger: Sequence[Source], max_gaps: int) -> list[BaseMessage]:
    """Ask what the sources do not answer yet, as follow-up queries."""
    system = (
        "You review research in progress. Reply with one JSON object only, listing at most "
        f"{max_gaps} new web search queries for what the sources below do not answer yet, "
        'as {"gaps": [{"query": ...}]}, or {"gaps": []} when they answer the question.'
    )
    sources = "\n".join(f"[{s['n']}] {s['title']}: {s['text'][:200]}" for s in ledger[:12])
    user = f"Question: {question}\n\nSources:\n{sources or '(none)'}"
    return [SystemMessage(system), HumanMessage(user)]


COMPOSE_SYSTEM = (
    "You write a research report in Markdown that answers the question from the numbered "
    "sources only. After every statement, cite its source by number in square brackets, "
    "like [2]. Copy numbers and names exactly as the source writes them, and state nothing "
    "the sources do not say. Do not write URLs or a list of references: they are added for "
    "you. If the sources do not answer the question, say so."
)


def compose_messages(
    question: str, ledger: Sequence[Source], per_source: int, budget: int
) -> list[BaseMessage]:
    """The report request: the question and each source's text, within ``budget`` chars."""
    count = max(1, len(ledger))
    each = max(200, min(per_source, budget // count))
    blocks = []
    for s in ledger:
        text = s["text"] if len(s["text"]) <= each else s["text"][:each].rsplit(" ", 1)[0] + " …"
        blocks.append(f"[{s['n']}] {s['title']}\n{text}")
    sources = "\n\n".join(blocks) or "(no sources could be found or read)"
    user = f"Question: {question}\n\nSources:\n\n{sources}\n\nWrite the report."
    return [SystemMessage(COMPOSE_SYSTEM), HumanMessage(user)]


def observation(step: dict[str, Any]) -> str:
    """One line on a step for the replan prompt."""
    args = json.dumps(step.get("args") or {}, ensure_ascii=False)
    status = step.get("status", "pending")
    if status == "failed":
        return f"{step['id']} {step['tool']} {args}: failed: {step.get('error')}"
    found = len(step.get("found") or [])
    return f"{step['id']} {step['tool']} {args}: {status}" + (
        f", {found} source(s)" if found else ""
    )
