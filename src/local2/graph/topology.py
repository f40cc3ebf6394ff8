"""The topology: the original generator's state machine as a LangGraph ``StateGraph``.

```
START -> receive -> generate --(tool calls, under the limit)--> approve -> dispatch_tool
                       ^                                                        |
                       +--------------------- await_tool <----------------------+
         generate --(final answer, or forced synthesis at the limit)--> publish
         generate --(repair a malformed tool call / empty reply)--> generate
         publish -> critique -> END        (in parallel)
         publish -> ingest   -> END        (in parallel)
         receive --(question rejected)--> END
```
``receive`` also recalls (``local2.graph.nodes.recall``, in the same step): it saves what the
person asked to be remembered and gives the model the memories most similar to the
question, as data, before it answers. ``approve`` pauses the turn
(LangGraph ``interrupt``) while a call waits for the person.
Two respondents (DESIGN §9), and a second attempt at a low-graded answer:
```
receive --(compare)--> compare -> respond(a) | respond(b)  (each its own generate/tool loop)
          -> publish_pair -> critique_pair | ingest_pair -> settle_pair -> END
receive --(retry)--> retry_context -> generate ... publish -> critique -> settle_retry -> END
```
Services (chat model, tools, memory, critic) are injected here, so tests and notebooks can
swap any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from local2.config import Settings, load_settings
from local2.graph.nodes.approve import approve
from local2.graph.nodes.await_tool import await_tool
from local2.graph.nodes.common import Services
from local2.graph.nodes.critique import critique
from local2.graph.nodes.dispatch_tool import dispatch_tool
from local2.graph.nodes.generate import generate
from local2.graph.nodes.ingest import ingest
from local2.graph.nodes.publish import publish
from local2.graph.nodes.recall import receive_and_recall
from local2.graph.state import TurnState
from local2.storage.turn_log import TurnLog
from local2.tools.base import Tool

AUTO: Any = "auto"  # "build this service from settings"
Binder = Callable[[Callable[..., dict]], Callable[..., dict]]


def after_receive(
    state: TurnState, config: RunnableConfig
) -> Literal["generate", "compare", "retry_context", "__end__"]:
    """A rejected question ends the turn; else one respondent answers, or two, or a retry
    (as the run's config says)."""
    if state.get("error"):
        return END
    from local2.graph.compare.topology import answer_path

    return answer_path(config)


def after_generate(state: TurnState) -> Literal["approve", "generate", "publish"]:
    decision = state.get("decision")
    if decision == "dispatch_tool":
        return "approve"  # every tool call passes the person's gate first
    if decision == "generate":
        return "generate"
    return "publish"


def recursion_limit(settings: Settings) -> int:
    """Enough super-steps for every allowed tool round, a repair and the tail."""
    return 13 + 4 * (settings.generator.max_tool_iterations + 3)


def add_answer_loop(graph: StateGraph, bind: Binder, done: str) -> None:
    """generate -> approve -> dispatch_tool -> await_tool -> generate, until an answer goes
    to ``done``.

    Declared once: the chat graph runs it before ``publish``, each respondent of a compare
    turn runs it as its own subgraph (:mod:`local2.graph.compare.respond`).
    """
    graph.add_node("generate", bind(generate))
    graph.add_node("approve", bind(approve))
    graph.add_node("dispatch_tool", bind(dispatch_tool))
    graph.add_node("await_tool", bind(await_tool))
    graph.add_conditional_edges(
        "generate",
        after_generate,
        {"approve": "approve", "generate": "generate", "publish": done},
    )
    graph.add_edge("approve", "dispatch_tool")
    graph.add_edge("dispatch_tool", "await_tool")
    graph.add_edge("await_tool", "generate")


def compile_graph(
    services: Services,
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
) -> CompiledStateGraph:
    from local2.graph import pool as graph_pool
    from local2.graph.compare import topology

    graph_pool.install()  # runs reuse one thread pool instead of starting threads each turn

    def bind(fn: Callable[..., dict]) -> Callable[..., dict]:
        return partial(fn, services=services)

    graph = StateGraph(TurnState)
    graph.add_node("receive", bind(receive_and_recall))
    add_answer_loop(graph, bind, "publish")
    graph.add_node("publish", bind(publish))
    graph.add_node("critique", bind(critique))
    graph.add_node("ingest", bind(ingest))
    topology.add_compare_and_retry(graph, bind, services)

    graph.add_edge(START, "receive")
    graph.add_conditional_edges(
        "receive",
        after_receive,
        {"generate": "generate", "compare": "compare", "retry_context": "retry_context", END: END},
    )
    graph.add_edge("publish", "critique")
    graph.add_edge("publish", "ingest")
    graph.add_conditional_edges(
        "critique", topology.after_critique, {"settle_retry": "settle_retry", END: END}
    )
    graph.add_edge("ingest", END)
    compiled = graph.compile(checkpointer=checkpointer, store=store, name="local2")
    return compiled.with_config(recursion_limit=recursion_limit(services.settings))  # type: ignore[return-value]


def build_services(
    settings: Settings,
    *,
    chat_model: BaseChatModel | None = None,
    tools: Sequence[Tool] | None = None,
    memory: Any = AUTO,
    critic: Any = AUTO,
    turn_log: TurnLog | None = None,
    backend: str | None = None,
    model: str | None = None,
    native_tools: bool | None = None,
) -> Services:
    """Assemble the services from settings, keeping whatever the caller supplied.

    ``native_tools`` says whether a supplied ``chat_model`` calls tools natively (default
    yes); a model built here knows it from its backend and Ollama's capabilities.
    """
    from local2.models.backend import make_chat_model
    from local2.models.router import route
    from local2.models.toolcall_text import parse_tool_calls, repair_message, validate_args

    if chat_model is None:
        chosen = make_chat_model(settings, backend=backend, model=model)
        chat_model, model_name, backend_name = chosen.model, chosen.name, chosen.backend
        native_tools = chosen.native_tools
    else:
        model_name = model or getattr(chat_model, "model", None) or type(chat_model).__name__
        backend_name = backend or "custom"
    if turn_log is None:
        from local2.storage.conversations import open_storage

        turn_log = open_storage(settings).turn_log
    if memory is AUTO:
        from local2.graph.nodes.ingest import open_memory_noting

        memory, memory_notice = open_memory_noting(settings)
    else:
        memory_notice = getattr(memory, "notice", None)
    notices = [memory_notice] if isinstance(memory_notice, str) and memory_notice else []
    if critic is AUTO:
        critic = default_critic(settings, chat_model, backend_name)
    if tools is None:
        from local2.tools.registry import default_tools

        tools = default_tools(settings, memory, backend_name)
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
    )


def default_critic(settings: Settings, chat_model: BaseChatModel, backend: str) -> Any:
    """The judge: ``critic.model`` (on the generator's server) when set, else the generator's model.

    The embedded demo model almost never produces a parseable grade, so with it the critic is
    off unless ``critic.grade_embedded`` (then it gets one attempt only).
    """
    from local2.critic import make_critic

    critic_settings = settings.critic
    judge = chat_model
    if critic_settings.model:
        from local2.models.backend import make_chat_model

        judge_backend = "openai" if backend == "openai" else "ollama"
        judge = make_chat_model(settings, judge_backend, critic_settings.model).model
    elif backend == "embedded":
        if not critic_settings.grade_embedded:
            return None
        critic_settings = critic_settings.model_copy(update={"retries": 0})
    return make_critic(judge, critic_settings)


def build_graph(
    settings: Settings | None = None,
    *,
    chat_model: BaseChatModel | None = None,
    tools: Sequence[Tool] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    memory: Any = AUTO,
    critic: Any = AUTO,
    turn_log: TurnLog | None = None,
    backend: str | None = None,
    model: str | None = None,
    native_tools: bool | None = None,
) -> CompiledStateGraph:
    """The compiled agent. Invoking it with a ``thread_id`` is one turn of that session.

    ```python
    graph = build_graph(load_settings())
    state = graph.invoke({"query": "Hi"}, {"configurable": {"thread_id": "s1"}})
    ```
    """
    from local2.storage.conversations import open_storage

    settings = settings or load_settings()
    storage = open_storage(settings, checkpointer=checkpointer, turn_log=turn_log)
    services = build_services(
        settings,
        chat_model=chat_model,
        tools=tools,
        memory=memory,
        critic=critic,
        turn_log=storage.turn_log,
        backend=backend,
        model=model,
        native_tools=native_tools,
    )
    return compile_graph(services, storage.checkpointer)
