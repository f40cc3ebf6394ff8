"""One call of the chat model, with its failures named: the chat turn's ``generate`` and
research's planning, composing and reflecting all ask the model through it."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

try:  # LangChain's own marker of a token-reading callback (private: its chat models use it)
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # moved in another langchain-core: then always stream, as before
    _StreamingCallbackHandler = None  # type: ignore[assignment,misc]  # no marker to test for

from local2.errors import ModelError
from local2.graph.services import Services
from local2.models import describe_ollama_error, prompted_messages


def streams_tokens(config: RunnableConfig) -> bool:
    """Whether a callback takes the reply token by token (LangGraph's ``messages`` stream):
    the test LangChain's own chat models make before streaming."""
    if _StreamingCallbackHandler is None:
        return True
    callbacks = config.get("callbacks")
    handlers: Iterable[object] = (
        callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else callbacks or []
    )
    return any(isinstance(h, _StreamingCallbackHandler) for h in handlers)


def call_model(
    services: Services, prompt: list[BaseMessage], config: RunnableConfig, *, tools: bool
) -> AIMessage:
    """Invoke the chat model and name failures. With ``tools`` the schemas are bound natively,
    or, for a model that cannot call tools, described in its prompt.

    ChatOllama streams its HTTP reply even when nobody reads the tokens, building a message
    chunk per token; when no one does (``POST /query``), it is asked for the whole reply at
    once: the same message, ~3 ms less per call (``bench/overhead.py``)."""
    model = services.chat_model
    schemas = [t.schema() for t in services.tools.values()] if tools else None
    if schemas and services.native_tools:
        model = model.bind_tools(schemas)  # type: ignore[assignment]  # a Runnable over the same model
    elif not services.native_tools:
        prompt = prompted_messages(prompt, schemas)
    whole = services.backend == "ollama" and not streams_tokens(config)
    try:
        if whole:
            reply = model.invoke(prompt, config, stream=False)
        else:
            reply = model.invoke(prompt, config)
    except ModelError:
        raise
    except Exception as exc:
        if services.backend == "ollama":
            raise describe_ollama_error(
                exc, host=services.settings.ollama_host, model=services.model_name
            ) from exc
        raise ModelError(f"The {services.backend or 'chat'} model failed: {exc}") from exc
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=getattr(reply, "content", str(reply)))
    return reply
