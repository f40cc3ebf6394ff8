"""Which tool calls must wait for the person (docs/architecture.md, "Trust boundaries"): the policy,
as pure functions.

Only the person may cause effects. Two rules, both off with ``tools.approval: never``:

- **Side effects need the person.** Once outside content (a fetched page, search results, MCP
  output) is in the turn's context, a side-effecting call waits for approval: the content may
  be what asked for it. With ``always`` every side-effecting call waits.
- **Private data does not leave by URL.** While memory hits, the person's files or earlier
  turns are in the context, a request to a URL that came neither from the person's messages
  nor from this turn's search results waits too: the URL itself can carry the data
  (``https://evil.example/?d=<what the person said>``). With ``always`` such a fetch waits
  whether or not private data is there.

What each tool does and returns is its class in the registry (:class:`~local2.tools._base.Tool`
``effects`` / ``output`` / ``url_arg``); ``tools.read_only`` and ``tools.side_effecting`` in
config override ``effects`` by name (MCP tools, chiefly).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from local2.config import ToolsSettings
from local2.contracts import DENIED, WEB_SEARCH, Preceding, WaitingCall
from local2.tools._base import Effects, Tool
from local2.tools._corpus import is_corpus_url

SEARCH_TOOLS = frozenset({WEB_SEARCH})  # their result URLs count as given for this turn
PREVIEW_CHARS = 600
_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Source:
    """A tool result already in the context: what the person is shown as "preceded by"."""

    tool: str
    call_id: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    preview: str

    def as_dict(self) -> Preceding:
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "args": copy.deepcopy(self.args),
            "preview": self.preview,
        }


@dataclass(frozen=True)
class Need:
    """One pending call that must wait for the person, and why."""

    call_id: str
    tool: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    reason: str
    after: Source | None

    def as_dict(self) -> WaitingCall:
        """The call as the approval request shows it (a copy: the request is kept)."""
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "args": copy.deepcopy(self.args),
            "reason": self.reason,
            "after": self.after.as_dict() if self.after is not None else None,
        }


@dataclass(frozen=True)
class TurnContext:
    """What the model has seen this turn, as far as trust is concerned."""

    untrusted: list[Source]  # outside content, oldest first
    untrusted_text: list[str]  # the whole text of each, for finding where a URL came from
    private: list[str]  # why private data is in the context, e.g. "memory hits"
    given_urls: frozenset[str]  # URLs the person wrote or this turn's search returned


def effects_of(tool: Tool, settings: ToolsSettings) -> Effects:
    if tool.name in settings.side_effecting:
        return "write"
    if tool.name in settings.read_only:
        return "read"
    return tool.effects


def normalise_url(url: str) -> str:
    """A URL compared as a person would: scheme and host lower-case, no fragment, no default
    port. Path, query and user info stay exact, since any of them can carry data."""
    url = url.strip().rstrip(".,;:!?")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    if port is not None and port == _DEFAULT_PORTS.get(scheme):
        netloc = netloc.rsplit(":", 1)[0]
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def urls_in(text: str) -> set[str]:
    return {normalise_url(u) for u in _URL.findall(text or "")}


def _source(record: Mapping[str, Any]) -> Source:
    return Source(
        tool=str(record.get("tool") or ""),
        call_id=str(record.get("id") or ""),
        args=dict(record.get("args") or {}),
        preview=str(record.get("result") or "")[:PREVIEW_CHARS],
    )


def turn_context(
    state: Mapping[str, Any], tools: Mapping[str, Tool], history_users: Sequence[str]
) -> TurnContext:
    """Outside content, private data and given URLs in the context of this turn so far."""
    untrusted: list[Source] = []
    texts: list[str] = []
    private: list[str] = []
    given = urls_in(str(state.get("query") or ""))
    for text in history_users:
        given |= urls_in(text)
    for record in state.get("tool_calls") or []:
        tool = tools.get(str(record.get("tool")))
        if tool is None or str(record.get("error") or "").startswith(DENIED):
            continue  # an unknown tool or a refused call returned only our own words
        if tool.output == "untrusted":
            untrusted.append(_source(record))
            texts.append(str(record.get("result") or ""))
            if tool.name in SEARCH_TOOLS and not record.get("error"):
                given |= urls_in(str(record.get("result") or ""))
        elif tool.output == "private" and not record.get("error"):
            private.append(f"the {tool.name} result")
    if state.get("memory_hits"):
        private.append("memory hits")
    if history_users:
        private.append("earlier turns of this conversation")
    return TurnContext(untrusted, texts, list(dict.fromkeys(private)), frozenset(given))


def _naming(url: str, context: TurnContext) -> Source | None:
    """The latest outside result that mentions ``url``: where the model most likely got it."""
    wanted = normalise_url(url)
    pairs = list(zip(context.untrusted, context.untrusted_text, strict=True))
    return next((s for s, text in reversed(pairs) if wanted in urls_in(text)), None)


def _outside(sources: Sequence[Source]) -> str:
    names = ", ".join(dict.fromkeys(s.tool for s in sources))
    return f"outside content ({names} output)"


def review(
    state: Mapping[str, Any],
    tools: Mapping[str, Tool],
    settings: ToolsSettings,
    history_users: Sequence[str] = (),
) -> list[Need]:
    """The pending calls of ``state`` that must wait for the person, in call order."""
    if settings.approval == "never":
        return []
    always = settings.approval == "always"
    context = turn_context(state, tools, history_users)
    latest = context.untrusted[-1] if context.untrusted else None
    needs: list[Need] = []
    for call in state.get("pending_tool_calls") or []:
        tool = tools.get(str(call.get("name")))
        if tool is None:
            continue  # await_tool answers "[unknown tool]"; nothing runs
        args = dict(call.get("args") or {})
        reason, after = None, latest
        if effects_of(tool, settings) == "write":
            if context.untrusted:
                reason = (
                    f"{tool.name} changes something beyond this answer, and "
                    f"{_outside(context.untrusted)} is in this turn: it may be what asked for it"
                )
            elif always:
                reason = (
                    f"{tool.name} changes something beyond this answer (tools.approval: always)"
                )
        url = args.get(tool.url_arg) if tool.url_arg else None
        if (
            reason is None
            and isinstance(url, str)
            and not is_corpus_url(url)  # read from the corpus here: nothing leaves
            and normalise_url(url) not in context.given_urls
        ):
            if context.private:
                reason = (
                    f"this URL came neither from you nor from this turn's search results, and "
                    f"{' and '.join(context.private)} are in the context: the request could "
                    "carry them to that site"
                )
                after = _naming(url, context) or latest
            elif always:
                reason = (
                    "this URL came neither from you nor from this turn's search results "
                    "(tools.approval: always)"
                )
                after = _naming(url, context) or latest
        if reason is not None:
            needs.append(Need(str(call.get("id")), tool.name, args, reason, after))
    return needs
