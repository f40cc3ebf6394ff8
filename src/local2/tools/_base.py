"""What a tool is to the graph: a name, a schema, and a function that returns text.

A tool returns text (or a :class:`ToolResult` carrying structured data beside the text) and
signals failure by raising :class:`ToolError`; ``await_tool`` turns that into the
``[tool error: ...]`` the model reads. Schemas come from ``generator.yaml`` only, so they can
be tuned without code and never drift from a copy.

Runs tool calls concurrently so ``dispatch_tool`` can start them and ``await_tool`` collect.

Futures cannot live in a checkpoint, so they are kept here, keyed by query and call id. When a
run resumes at ``await_tool`` from a checkpoint (replay), the future is gone and the call is
simply started again.

A thread cannot be killed, so a call that times out is stopped cooperatively: each call gets
its own ``ToolContext.cancel`` event, :meth:`ToolRunner.stop` sets it and waits a grace
period for the call to end. ``web_fetch`` watches it (download cancelled, extraction worker
killed); a tool that ignores it is reported as not stopped.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from local2.config import Settings, ToolSchema
    from local2.tools._fallback import Extract


@dataclass(frozen=True)
class ToolContext:
    """Who is asking and why: memory tools tag what they store with the ids and use
    ``owner``'s memory only, web_fetch picks the passages of a page relevant to ``query``.
    ``cancel`` is set when the graph gives up on the call (timeout): a tool that can run long
    stops its work when it sees it."""

    session_id: str
    query_id: str
    query: str = ""  # the person's question this turn
    owner: str = "local"  # whose turn or run this is (local2.contracts._people)
    max_results: int | None = None  # a search asked for more hits (research), else the setting
    purpose: Literal["chat", "research"] = "chat"  # what reads: the library keeps by it
    round: int | None = None  # the research round of the step asking (its first may be scoped)
    cancel: threading.Event = field(default_factory=threading.Event, compare=False)


@dataclass
class ToolResult:
    """Text for the model plus data for the payload (``memory_hits``) and extra events."""

    text: str
    # Each tool's own account of its result, in its own keys (JSON for the payload); the
    # turn reads ``provider`` and ``memory_hits``.
    data: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, object]]] = field(default_factory=list)  # (subject, fields)


ToolFn = Callable[[Mapping[str, Any], ToolContext], "str | ToolResult"]

# What a tool does to the world, and what its output brings into the model's context
# (docs/architecture.md, "Trust boundaries"). An unclassified tool is assumed to have
# effects and to return outside text.
Effects = Literal["read", "write"]
Output = Literal["untrusted", "private", "own"]  # outside content | the person's data | ours
# What the grounding check takes a result for: the content it returned (a page, a file), or
# a listing that merely names things (files found by name or by a search).
Evidence = Literal["content", "listing"]


@dataclass(frozen=True)
class Cue:
    """When a question's words alone ask for a tool, and with which arguments: the keyword
    router (:mod:`local2.tools._routing`) for models that cannot call tools."""

    args: Callable[[str, dt.date], dict[str, str] | None]  # (question, today) -> args or None
    rank: int = 50  # cues are tried in rank order (lower first)
    alone: bool = False  # when it matches, no later cue is tried
    last_resort: bool = False  # tried only when no other cue matched


@dataclass(frozen=True)
class Tool:
    """A tool the model may call, and what the rest of LoCAL2 knows about it.

    ``effects``/``output``/``url_arg`` decide what needs the person's approval and what is
    untrusted; ``extract`` quotes its result in a fallback answer; ``cue`` routes a question
    to it for a model that cannot call tools; ``evidence`` is what the grounding check takes
    its result for. The defaults suit a tool nothing more is known about.
    """

    name: str
    description: str
    parameters: dict[str, Any]  # its arguments as a JSON schema document
    run: ToolFn
    timeout_s: float | None = None  # None: the generator's tool_timeout_s
    effects: Effects = "write"
    output: Output = "untrusted"
    url_arg: str | None = None  # the argument naming a URL the tool sends a request to
    extract: Extract | None = None  # None: its result is quoted as it came
    cue: Cue | None = None  # None: the keyword router never proposes it
    evidence: Evidence = "content"

    def schema(self) -> dict[str, Any]:  # a JSON schema document, as bind_tools takes it
        """The OpenAI/Ollama function schema bound to the chat model."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def as_result(output: str | ToolResult) -> ToolResult:
    return output if isinstance(output, ToolResult) else ToolResult(text=str(output))


_declared: dict[str, ToolSchema] = {}


def declare(schema: ToolSchema) -> ToolSchema:
    """A tool's name, description and parameters, declared beside its code (the module that
    builds the tool): what the model is told, unless ``generator.tools`` tunes it."""
    _declared[schema.name] = schema
    return schema


def declared_tools() -> dict[str, ToolSchema]:
    """Every tool declared so far (by the modules imported), by name."""
    return dict(_declared)


def configured_tool(
    settings: Settings,
    declared: ToolSchema | str,
    run: ToolFn,
    timeout_s: float | None = None,
    *,
    effects: Effects,
    output: Output,
    url_arg: str | None = None,
    extract: Extract | None = None,
    cue: Cue | None = None,
    evidence: Evidence = "content",
) -> Tool:
    """A tool as ``declared`` beside its code (or by name: a declared tool's), described as
    the user's ``generator.tools`` entry says when one is listed; its class (effects,
    output) is the caller's to say."""
    if isinstance(declared, str):
        found = _declared.get(declared)
        if found is None:
            raise ValueError(f"tool {declared!r} is declared nowhere (tools/_base.py: declare)")
        declared = found
    name = declared.name
    schema = settings.generator.tool_schema(name) or declared
    return Tool(
        name,
        schema.description,
        schema.parameters,
        run,
        timeout_s=timeout_s,
        effects=effects,
        output=output,
        url_arg=url_arg,
        extract=extract,
        cue=cue,
        evidence=evidence,
    )


STOP_GRACE_S = 2.0  # how long a cancelled call may take to wind down


@dataclass
class Started:
    future: Future[ToolResult]
    started_at: float
    cancel: threading.Event


class ToolRunner:
    """A thread pool for tool calls; a call that times out is cancelled and waited for."""

    def __init__(self, max_workers: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="local2-tool")
        self._started: dict[tuple[str, str], Started] = {}
        self._lock = threading.Lock()

    # args: the call's arguments as the model (or a research plan) wrote them (JSON)
    def start(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, call_id: str) -> Started:
        cancel = threading.Event()
        call_ctx = replace(ctx, cancel=cancel)
        future = self._pool.submit(lambda: as_result(tool.run(args, call_ctx)))
        started = Started(future, time.time(), cancel)
        with self._lock:
            self._started[(ctx.query_id, call_id)] = started
        return started

    def take(self, query_id: str, call_id: str) -> Started | None:
        with self._lock:
            return self._started.pop((query_id, call_id), None)

    @staticmethod
    def stop(calls: list[Started], grace_s: float = STOP_GRACE_S) -> list[bool]:
        """Cancel ``calls`` and wait up to ``grace_s`` for them; for each, whether it ended."""
        for started in calls:
            started.cancel.set()
            started.future.cancel()  # one still queued never starts
        wait([s.future for s in calls], timeout=grace_s)
        return [s.future.done() for s in calls]

    def shutdown(self) -> None:
        with self._lock:
            pending, self._started = list(self._started.values()), {}
        for started in pending:
            started.cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
