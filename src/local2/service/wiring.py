"""The one place the application is put together from settings.

:func:`wire` chooses the chat model (``generator.backend``: Ollama, an OpenAI-compatible
server, or the embedded demo model), opens the conversation store, memory and the critic,
registers the tools, and collects what the person must be told about the result (a
fallback model, canned search, memory or critic off). Whatever the caller supplies is kept:
a test's scripted model, a notebook's in-memory checkpointer, a replay's shared store.

Everything that runs the graphs starts here: the :class:`~local2.service.agent.Agent`
(the app, the API, the CLI), :func:`build_graph` and :func:`build_research_graph`
(notebooks), LangGraph Server's graph (:mod:`local2.platform.graph`) and the research
service (:mod:`local2.service.research._research`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict, Unpack

from local2.config import Settings, load_settings
from local2.graph import Critic, Services, TurnGraph, compile_graph

if TYPE_CHECKING:
    from local2.research import ResearchGraph
from local2.memory import MemoryShelf, open_memory_noting
from local2.models import parse_tool_calls, repair_message, validate_args
from local2.service.notices import startup_notices
from local2.storage import (
    SharedLocks,
    Storage,
    TurnLog,
    open_research_storage,
    open_storage,
    raise_if_full,
)
from local2.tools import Tool

AUTO: Any = "auto"  # "build this part from settings"


@dataclass
class Wired:
    """What the application runs on."""

    settings: Settings
    services: Services
    storage: Storage
    notices: list[str] = field(default_factory=list)  # for the person, once, at start
    model_notice: str | None = None  # the model chosen is not the one configured (fallback)


class ModelParts(TypedDict, total=False):
    """What a caller may supply instead of having it built from settings: a chat model
    chosen already (``backend``, ``model`` and ``native_tools`` say what it is; without it
    they choose one), the ``notice`` that choice needs, the tools, memory (None: off), the
    shelf of everyone else's memory beside it (:mod:`local2.memory._shelf`; default: a new
    one around a real store), the critic (None: off) and the folders and people's own
    documents the file tools read (:class:`local2.files.Folders`; None: none)."""

    chat_model: BaseChatModel | None
    backend: str | None
    model: str | None
    native_tools: bool | None
    notice: str | None
    tools: Sequence[Tool] | None
    memory: Any
    memory_shelf: Any
    critic: Any
    files: Any


class Parts(ModelParts, total=False):
    """:class:`ModelParts`, and where conversations are kept: a checkpointer, a turn log or
    session locks to use, or a whole ``storage`` already open (shared, not reopened)."""

    checkpointer: BaseCheckpointSaver[Any] | None
    turn_log: TurnLog | None
    session_locks: SharedLocks | None
    storage: Storage | None


def wire(settings: Settings | None = None, **parts: Unpack[Parts]) -> Wired:
    """The services over the configured store, keeping every part the caller supplied."""
    settings = settings or load_settings()
    chat_model, notice = parts.get("chat_model"), parts.get("notice")
    backend, model = parts.get("backend"), parts.get("model")
    native_tools = parts.get("native_tools")
    if chat_model is None:
        # lazy: local2.models, local2.ports: ~3 ms, 3 modules at import
        from local2.models import make_chat_model

        chosen = make_chat_model(settings, backend=backend, model=model)
        chat_model, model, backend = chosen.model, chosen.name, chosen.backend
        native_tools, notice = chosen.native_tools, notice or chosen.notice
    try:  # both write to the data directory (a full disk: say so, not a trace)
        storage = parts.get("storage") or open_storage(
            settings,
            checkpointer=parts.get("checkpointer"),
            turn_log=parts.get("turn_log"),
            locks=parts.get("session_locks"),
        )
        services = build_services(
            settings,
            chat_model=chat_model,
            tools=parts.get("tools"),
            memory=parts.get("memory", AUTO),
            memory_shelf=parts.get("memory_shelf", AUTO),
            critic=parts.get("critic", AUTO),
            files=parts.get("files", AUTO),
            turn_log=storage.turn_log,
            backend=backend,
            model=model,
            native_tools=native_tools,
        )
    except Exception as exc:
        raise_if_full(exc, settings)
        raise
    services.votes = storage.votes  # None: SQLite, opened on first vote
    notices = [*startup_notices(settings, services, notice), *services.notices]
    return Wired(settings, services, storage, notices, notice)


def rewire(settings: Settings, services: Services, storage: Storage, model: str) -> Wired:
    """The same tools, memory (everyone's), critic and store, answered by another ``model``
    on the same kind of server (Ollama unless ``services`` talk to an OpenAI-compatible one;
    an Ollama model must be pulled: it is never silently replaced)."""
    return wire(
        settings,
        backend="openai" if services.backend == "openai" else "ollama",
        model=model,
        tools=list(services.tools.values()),
        memory=services.memory,
        memory_shelf=services.memory_shelf,
        critic=services.critic,
        files=services.files,
        storage=storage,
    )


def build_services(
    settings: Settings,
    *,
    chat_model: BaseChatModel,
    turn_log: TurnLog,
    tools: Sequence[Tool] | None = None,
    memory: Any = AUTO,
    memory_shelf: Any = AUTO,
    critic: Any = AUTO,
    files: Any = AUTO,
    backend: str | None = None,
    model: str | None = None,
    native_tools: bool | None = None,
) -> Services:
    """The graph's services around a chosen chat model: memory, critic and tools from
    settings unless given. Memory is local's store; everyone else's is opened beside it when
    first needed, on its shelf (``memory_shelf``)."""
    from local2.tools import route  # lazy: local2.tools: ~1 ms, 1 module at import

    model_name = model or getattr(chat_model, "model", None) or type(chat_model).__name__
    backend_name = backend or "custom"
    if memory is AUTO:
        memory, memory_notice = open_memory_noting(settings)
    else:
        memory_notice = getattr(memory, "notice", None)
    notices = [memory_notice] if isinstance(memory_notice, str) and memory_notice else []
    if memory_shelf is AUTO:
        memory_shelf = MemoryShelf.around(memory)
    if critic is AUTO:
        critic = default_critic(settings, chat_model, backend_name)
    if files is AUTO:
        files = default_folders(settings)
    if tools is None:
        from local2.tools import default_tools  # lazy: local2.tools: ~1 ms, 1 module at import

        tools = default_tools(settings, memory_shelf or memory, backend_name, folders=files)
    return Services(
        settings=settings,
        chat_model=chat_model,
        turn_log=turn_log,
        tools={t.name: t for t in tools},
        model_name=str(model_name),
        backend=backend_name,
        native_tools=True if native_tools is None else native_tools,
        memory=memory,
        critic=critic,
        tool_parser=parse_tool_calls,
        router=route,
        arg_validator=validate_args,
        repair_message=repair_message,
        notices=notices,
        memory_shelf=memory_shelf,
        files=files,
    )


def default_folders(settings: Settings) -> Any:
    """The configured folders and people's own documents (None: neither is on)."""
    if not (settings.files.roots or settings.documents.own):
        return None
    # lazy: local2.files, local2.bounded: ~20 ms, 9 modules at import
    from local2.files import Folders

    return Folders(settings)


def default_critic(settings: Settings, chat_model: BaseChatModel, backend: str) -> Critic | None:
    """The judge: ``critic.model`` (on the generator's server) when set, else the generator's
    model.

    The embedded demo model almost never produces a parseable grade, so with it the critic is
    off unless ``critic.grade_embedded`` (then it gets one attempt only).
    """
    from local2.critic import make_critic  # lazy: local2.critic: ~7 ms, 2 modules at import

    critic_settings = settings.critic
    judge = chat_model
    if critic_settings.model:
        # lazy: local2.models, local2.ports: ~3 ms, 3 modules at import
        from local2.models import make_chat_model

        judge_backend = "openai" if backend == "openai" else "ollama"
        judge = make_chat_model(settings, judge_backend, critic_settings.model).model
    elif backend == "embedded":
        if not critic_settings.grade_embedded:
            return None
        critic_settings = critic_settings.model_copy(update={"retries": 0})
    return make_critic(judge, critic_settings)


def build_graph(settings: Settings | None = None, **parts: Unpack[Parts]) -> TurnGraph:
    """The compiled chat graph. Invoking it with a ``thread_id`` is one turn of that session.

    ```python
    graph = build_graph(load_settings())
    state = graph.invoke({"query": "Hi"}, {"configurable": {"thread_id": "s1"}})
    ```
    """
    wired = wire(settings, **parts)
    return compile_graph(wired.services, wired.storage.checkpointer)


def build_research_graph(
    settings: Settings | None = None,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    **parts: Unpack[ModelParts],
) -> ResearchGraph:
    """The compiled research graph, checkpointed by ``checkpointer`` (default: where
    ``system.checkpointer`` says). Invoking it with a ``thread_id`` (the run id) is a run.

    ```python
    graph = build_research_graph(load_settings())
    run = graph.invoke({"question": "..."}, {"configurable": {"thread_id": "r1"}})
    print(run["report"])
    ```
    """
    # lazy: local2.tools, local2.research: ~75 ms, 43 modules at import
    from local2.research import compile_research_graph, research_services

    settings = settings or load_settings()
    wired = wire(settings, **parts)
    if checkpointer is None:
        checkpointer = open_research_storage(settings).checkpointer
    return compile_research_graph(research_services(wired.services), checkpointer)


def build_platform_research_graph(
    settings: Settings | None,
    owners_store: Callable[[], BaseStore],
    identify: Callable[..., Any],
) -> ResearchGraph:
    """The research graph as LangGraph Server runs it (:mod:`local2.platform.research_graph`):
    no checkpointer of its own (a pause is the thread's interrupt, on the platform's
    checkpointer) and nothing kept in a local file (the platform's store, as for the chat
    graph), ``identify`` first (whose run it is, from the platform's auth), and no inbox (a
    say has no store to go through there: steer a run served by ``local2 serve``)."""
    # lazy: local2.tools, local2.research: ~76 ms, 43 modules at import
    from local2.research import compile_research_graph, research_services

    wired = wire(settings, storage=_platform_storage(owners_store))
    return compile_research_graph(
        research_services(wired.services), checkpointer=None, identify=identify
    )


def _platform_storage(owners_store: Callable[[], BaseStore]) -> Storage:
    """The storage of a graph on LangGraph Server: the platform's checkpointer (none of
    ours), the clean turns and the arena's votes in the part of its store ``owners_store``
    returns for the run's owner."""
    # lazy: local2.storage: ~1 ms, 1 module at import
    from local2.storage import StoreTurnLog, StoreVoteLog

    return Storage(
        None, StoreTurnLog(owners_store), SharedLocks(), votes=StoreVoteLog(owners_store)
    )


def build_platform_graph(
    settings: Settings | None, owners_store: Callable[[], BaseStore], store: BaseStore | None
) -> TurnGraph:
    """The chat graph as LangGraph Server runs it (:mod:`local2.platform.graph`): no
    checkpointer of its own; the clean turns and the arena's votes go to the platform's store,
    in the part ``owners_store`` returns for the run's owner."""
    wired = wire(settings, storage=_platform_storage(owners_store))
    return compile_graph(wired.services, checkpointer=None, store=store)
