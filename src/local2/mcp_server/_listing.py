"""``resources/list``: the person's recent research reports and their documents, newest
first, in pages.

A host that browses resources (rather than filling in a template) sees what there is to
read: each finished run's report (``local2://research/{run_id}``, Markdown) and each
document (``local2://documents/{document_id}``, text). The cursor is opaque and stable: it
names the last item a page ended on (its time and URI), so a run finished while a client
pages on shows at the top of the next listing and never moves an item between pages. The
last page has no ``nextCursor``, as the MCP specification asks.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from mcp_types import Annotations, ListResourcesResult, Resource

from local2.contracts import DocumentRecord, Person, ResearchRun
from local2.errors import InvalidInput

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

PAGE_SIZE = 50
RECENT_RUNS = 200  # the newest runs listed; older ones are read by their id
# A run still going (or paused, or cut off) has no report to read yet, and one that found no
# source has none at all (its notice is read by its URI); every other status has one,
# whatever it is called.
NO_REPORT = frozenset({"running", "awaiting_input", "unfinished", "failed", "no_sources"})
CURSOR_FIX = "Send the nextCursor of the last resources/list answer, or none to start over."


class Listed(NamedTuple):
    """One resource, with where it sorts: newest first, then by URI."""

    when: float
    resource: Resource

    @property
    def key(self) -> tuple[float, str]:
        return (-self.when, str(self.resource.uri))


def report_uri(run_id: str) -> str:
    return f"local2://research/{run_id}"


def document_uri(document_id: str) -> str:
    return f"local2://documents/{document_id}"


def modified(when: float) -> Annotations:
    return Annotations(last_modified=datetime.fromtimestamp(when, UTC).isoformat())


def short(text: str, most: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def report_entry(run: ResearchRun) -> Listed:
    when = run["updated_at"] or run["created_at"]
    resource = Resource(
        uri=report_uri(run["run_id"]),
        name=short(run["question"]) or run["run_id"],
        title=f"Research report: {short(run['question'])}",
        description=f"Your research run {run['run_id']} ({run['status']}, "
        f"{run['sources']} sources): its verified report, cited as [n].",
        mime_type="text/markdown",
        annotations=modified(when),
    )
    return Listed(when, resource)


def document_entry(record: DocumentRecord) -> Listed:
    named = record["title"] or record["name"]
    pages = f"{record['pages']} page{'s' if record['pages'] != 1 else ''}"
    resource = Resource(
        uri=document_uri(record["id"]),
        name=named,
        title=f"Document: {named}",
        description=f"Your document {record['name']} ({record['format']}, {pages}), as text; "
        "one page at .../page/{n}.",
        mime_type="text/plain",
        size=record["bytes"],
        annotations=modified(record["added_at"]),
    )
    return Listed(record["added_at"], resource)


def everything(agent: Agent, person: Person) -> list[Listed]:
    """The person's reports and documents, in the listing's order."""
    owner = agent.access.listing_owner(person)
    runs = [r for r in agent.research.runs(RECENT_RUNS, owner) if r["status"] not in NO_REPORT]
    found = [report_entry(r) for r in runs]
    found += [document_entry(d) for d in agent.documents.records(person)]
    return sorted(found, key=lambda listed: listed.key)


def cursor_of(listed: Listed) -> str:
    when, uri = listed.key
    return base64.urlsafe_b64encode(json.dumps([when, uri]).encode()).decode()


def after(cursor: str) -> tuple[float, str]:
    """Where the page a cursor names starts; a cursor this server never gave is refused."""
    try:
        when, uri = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(when), str(uri)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidInput(
            f"Cursor {short(cursor, 40)!r} is not one of ours.", CURSOR_FIX
        ) from None


def page(agent: Agent, person: Person, cursor: str | None) -> ListResourcesResult:
    """One page of the listing: from the start, or after the item ``cursor`` names."""
    found = everything(agent, person)
    if cursor:  # an empty cursor is the start (2026-07-28: it never means the end)
        start = after(cursor)
        found = [listed for listed in found if listed.key > start]
    shown = found[:PAGE_SIZE]
    more = len(found) > PAGE_SIZE
    return ListResourcesResult(
        resources=[listed.resource for listed in shown],
        next_cursor=cursor_of(shown[-1]) if more else None,
    )
