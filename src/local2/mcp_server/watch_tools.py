"""The watch tools: ``list_watches`` and ``add_watch`` (docs/watch.md).

Each is the HTTP API's ``GET``/``POST /watches`` through the same service
(:attr:`Agent.watches`), for the caller: their own watches only. A watch that cannot be
added (a bad schedule, time zone or Apprise URL) is refused as the other tools refuse,
``{error, fix, status}`` as text, the fix an example; nothing is kept.
"""

from typing import TYPE_CHECKING, Annotated, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts import Person, WatchView
from local2.mcp_server._hints import ADDS, READS
from local2.mcp_server.caller import caller
from local2.mcp_server.failures import refusals

if TYPE_CHECKING:
    from local2.service import Agent


class WatchList(TypedDict):
    """Your watches, the oldest first."""

    watches: list[WatchView]


def add_watch_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """Register ``list_watches`` and ``add_watch`` on ``server``."""

    @server.tool(title="Your watches", annotations=READS)
    @refusals
    async def list_watches() -> WatchList:
        """Your watches (questions researched again on a schedule): each one's schedule,
        time zone, next run (epoch seconds; null when paused) and whom it tells (redacted)."""
        who = caller(person)
        return {"watches": await anyio.to_thread.run_sync(lambda: agent.watches.watches(who))}

    @server.tool(title="Watch a question", annotations=ADDS)
    @refusals
    async def add_watch(
        question: Annotated[str, Field(description="What to research each time.")],
        schedule: Annotated[
            str,
            Field(
                description='When: "every Monday 07:00", "every 6 hours", "30m" or a cron '
                'line ("0 7 * * mon").'
            ),
        ],
        timezone: Annotated[
            str | None, Field(description="An IANA time zone, e.g. Europe/Berlin.")
        ] = None,
        notify: Annotated[
            list[str] | None,
            Field(description="Apprise URLs to tell (mailto://, ntfy://, json://...)."),
        ] = None,
        notify_on: Literal["changes", "always", "never"] = "changes",
        max_rounds: Annotated[int | None, Field(ge=1, le=10)] = None,
        sources: Literal["web", "library", "both"] = "web",
    ) -> WatchView:
        """Research a question again on a schedule: each run is an ordinary research run,
        and what changed since the last one (new sources, new or revised claims, claims no
        longer supported) is told in your notices and feed, and to the Apprise URLs given."""
        who = caller(person)
        return await anyio.to_thread.run_sync(
            lambda: agent.watches.add(
                who,
                question,
                schedule,
                timezone=timezone,
                targets=notify or [],
                notify_on=notify_on,
                max_rounds=max_rounds,
                sources=sources,
            )
        )
