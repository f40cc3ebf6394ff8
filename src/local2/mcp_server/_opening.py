"""``local2 mcp``'s agent, opened beside a server that already answers.

A host waits for ``tools/list`` each time it starts the server (langchain-mcp-adapters starts
one per tool call). Listing the tools, prompts and resource templates needs nothing of the
agent, whose wiring (store, memory, tools, the model and its warm-up) takes seconds; so the
stdio server answers at once while the agent opens in a thread (:class:`OpeningAgent`), and
a request that needs the agent waits for it first (:class:`WaitForAgent`), in a worker
thread, never holding up the event loop. An agent that could not open is the refusal of
each request that needs it, in the words the command prints on stderr.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from local2.config import Settings
from local2.errors import Local2Error
from local2.mcp_server._failures import failed_call, mcp_error

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

logger = logging.getLogger(__name__)
# What a server answers from what it registered at start: nothing here reads the agent.
NEEDS_NO_AGENT = frozenset(
    {"initialize", "ping", "tools/list", "prompts/list", "resources/templates/list"}
)
CRASHED = "LoCAL2 could not start: {kind}: {error} (the traceback is in local2 mcp's stderr)."
CRASHED_FIX = "Run `local2 doctor`, which says what is missing, then restart the server."


class OpeningAgent:
    """An agent opening in a thread. Its ``settings`` are there at once (the command read
    them first); any other attribute is the open agent's, read once it is open (until then,
    reading one waits)."""

    def __init__(self, settings: Settings, open_agent: Callable[[], Agent]) -> None:
        self.settings = settings
        self.open_agent = open_agent
        self.done = threading.Event()
        self.opened: Agent | None = None
        self.failure: Local2Error | None = None
        self.thread = threading.Thread(target=self.opening, name="local2-opening", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def opening(self) -> None:
        try:
            self.opened = self.open_agent()
        except Local2Error as exc:
            self.failure = exc
        except Exception as exc:  # a defect: the host still hears why its calls fail
            logger.exception("Opening LoCAL2's agent failed")
            said = CRASHED.format(kind=type(exc).__name__, error=exc)
            self.failure = Local2Error(said, CRASHED_FIX)
        finally:
            self.done.set()

    def agent(self) -> Agent:
        """The open agent, once it is; what opening it raised, if it could not open."""
        self.done.wait()
        if self.failure is not None:
            raise self.failure
        assert self.opened is not None  # opening() sets one of the two
        return self.opened

    async def ready(self) -> None:
        """Return once the agent has opened or failed to, waiting in a worker thread."""
        if not self.done.is_set():
            await anyio.to_thread.run_sync(self.done.wait, abandon_on_cancel=True)

    def __getattr__(self, name: str) -> Any:  # only names this class does not set itself
        return getattr(self.agent(), name)

    def close(self) -> None:
        """Close the agent once it has opened (a server stopped while it opens waits)."""
        if self.thread.ident is not None:
            self.done.wait()
        if self.opened is not None:
            self.opened.close()


class WaitForAgent:
    """The middleware, outermost of LoCAL2's: a request the agent answers waits for it to
    open; if it could not, a tool call is refused as a tool result, anything else with the
    JSON-RPC error for the reason."""

    def __init__(self, opening: OpeningAgent) -> None:
        self.opening = opening

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        if ctx.request_id is None or ctx.method in NEEDS_NO_AGENT:
            return await call_next(ctx)
        await self.opening.ready()
        failure = self.opening.failure
        if failure is None:
            return await call_next(ctx)
        if ctx.method == "tools/call":
            refused: HandlerResult = failed_call(failure)
            return refused
        raise mcp_error(failure)
