"""The services every node is given: chosen when the graph is built, so any can be swapped.

Tests and notebooks swap them freely: a scripted chat model, a critic that always says 4, no
memory, a tool list of one. The parts that are only called through a narrow interface are
typed as Protocols here; :mod:`local2.service.wiring` builds the real ones from settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.language_models import BaseChatModel

from local2.config import Settings
from local2.contracts import LOCAL_NAME, Critique, PendingCall, ToolCallRecord
from local2.storage import TurnLog, VoteLog
from local2.tools import Tool, ToolRunner

if TYPE_CHECKING:
    from local2.files import Folders
    from local2.memory import EngramStore, MemoryShelf
    from local2.models import Cancellation, ParsedToolCalls

log = logging.getLogger(__name__)


class Critic(Protocol):
    """Grades an answer 1-5 with the turn's tool results as evidence (:mod:`local2.critic`)."""

    def grade(
        self,
        query: str,
        answer: str,
        evidence: list[ToolCallRecord],
        known_memory_ids: Callable[[str], bool] | None = None,
        reference: str | None = None,
        listing_tools: Collection[str] = (),
        context: str = "",
        cancel: Cancellation | None = None,
    ) -> Critique: ...


class ToolParser(Protocol):
    """Finds tool calls a model wrote as text (``models.toolcall_text.parse_tool_calls``)."""

    # tools: each tool's arguments as a JSON schema document, by name
    def __call__(self, text: str, tools: Mapping[str, dict[str, Any]]) -> ParsedToolCalls: ...


class Router(Protocol):
    """The keyword router's calls for a question."""

    def __call__(self, query: str, tools: Iterable[Tool]) -> list[PendingCall]: ...


class ArgValidator(Protocol):
    """Fixes ``args`` in place against a JSON schema; the errors that remain."""

    # args as the model wrote them (JSON); schema: the tool's, a JSON schema document
    def __call__(self, args: dict[str, Any], schema: dict[str, Any]) -> list[str]: ...


class RepairMessage(Protocol):
    """The one message telling a model how its malformed calls should look."""

    # tools: each tool's arguments as a JSON schema document, by name
    def __call__(self, errors: list[str], tools: Mapping[str, dict[str, Any]]) -> str: ...


class ModelFactory(Protocol):
    """A second respondent's chat model, by model name and temperature."""

    def __call__(self, model: str | None, temperature: float | None) -> Any: ...


@dataclass
class Services:
    """Everything a node may call."""

    settings: Settings
    chat_model: BaseChatModel
    turn_log: TurnLog
    tools: dict[str, Tool] = field(default_factory=dict)
    model_name: str = ""
    backend: str = ""
    # False: the model cannot call tools natively (the embedded model, an Ollama model whose
    # capabilities lack ``tools``): tools go in its prompt and the keyword router may help.
    native_tools: bool = True

    def listing_tools(self) -> frozenset[str]:
        """The tools whose results name files without reading them (grounding's view)."""
        return frozenset(name for name, tool in self.tools.items() if tool.evidence == "listing")

    memory: EngramStore | None = None  # local's; see memory_for
    critic: Critic | None = None
    tool_parser: ToolParser | None = None
    router: Router | None = None
    arg_validator: ArgValidator | None = None
    repair_message: RepairMessage | None = None
    runner: ToolRunner = field(default_factory=ToolRunner)
    # Compare turns: how a second respondent's chat model is made (None: from settings),
    # and where the arena's votes are kept (opened on first use).
    model_factory: ModelFactory | None = None
    votes: VoteLog | None = None
    notices: list[str] = field(default_factory=list)  # for the person (e.g. memory fallback)
    # Everyone else's memory beside local's ``memory`` (:mod:`local2.memory.shelf`).
    memory_shelf: MemoryShelf | None = None
    # The folders the file tools read, and each person's own documents (their library):
    # a session's attached documents are searched for each of its questions.
    files: Folders | None = None

    def memory_for(self, owner: str | None) -> EngramStore | None:
        """``owner``'s own engram store (None or ``local``: :attr:`memory`). None when memory
        is off, when it is a stand-in that has no one else's (a test's), or when theirs
        cannot be opened now (logged; tried again next time): memory off for them, never
        someone else's, nor the team's (the shelf refuses its name as an owner)."""
        if not owner or owner == LOCAL_NAME:
            return self.memory
        if self.memory_shelf is None:
            return None
        try:
            return self.memory_shelf.of(owner)
        except Exception as exc:  # answering without memory beats not answering
            log.warning("memory is off for %s this time: %s: %s", owner, type(exc).__name__, exc)
            return None

    def team_memory(self) -> EngramStore | None:
        """The team's shared facts, for recall only (:mod:`local2.memory.team`): None when
        memory is off or a stand-in, when there are none (looked at no more than every 30 s,
        so an empty team costs a turn no Chroma call), or when they cannot be opened now.
        Nothing a turn does writes them: ``memory_for`` never returns them."""
        if self.memory_shelf is None:
            return None
        try:
            return self.memory_shelf.team_facts()
        except Exception as exc:  # the person's own memory still answers
            log.warning("team facts are off this time: %s: %s", type(exc).__name__, exc)
            return None

    def close_memory_shelf(self) -> None:
        """Close everyone's memory but local's (closed with :attr:`memory`)."""
        if self.memory_shelf is not None:
            self.memory_shelf.close()
