"""Every error LoCAL2 raises, in one tree under :class:`Local2Error`.

Each error says what went wrong (``message``) and, where there is one, what to do about it
(``fix``). The branches say what kind of failure it is, and each surface maps the branches
once: to HTTP statuses (:mod:`local2.service._problems`, which the API answers and the MCP
server says), to exit codes and messages (:mod:`local2.cli._errors`) and to the app's
notices (:mod:`local2.ui._notices`)::

    Local2Error
    ├── InvalidInput          the request cannot be done as asked (422, exit 2)
    │   ├── DocumentUnreadable  a document that cannot be read within its limits
    │   │   └── DocumentTooLarge  more bytes than may be read or kept (413)
    │   └── EvalFileError     a question set, corpus or eval run file that cannot be read
    ├── NotFound              no such session, turn, checkpoint, run or document (404, exit 3)
    ├── Conflict              not now: something else is going on (409, exit 2)
    ├── Unavailable           a part LoCAL2 needs does not answer (503, exit 1)
    │   └── StorageFull       the disk under the data directory is full (507, exit 1)
    ├── ModelError            the model could not produce an answer (502, exit 1)
    ├── SettingsError         a config file that cannot be used (exit 1)
    ├── StoryError            an acceptance story that cannot be used (exit 2)
    └── ToolError             a tool failed; the model reads the message (never a surface's)

The classes also derive from the built-in they used to be (``ValueError``, ``LookupError``,
``RuntimeError``), so ``except ValueError`` around a question still catches a bad one.
:class:`TurnCancelled` is the one exception outside the tree (with :class:`GaveWay`, the
background work of an answered turn giving way to the next question): see their docstrings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Local2Error(Exception):
    """Base of every error LoCAL2 raises: ``message`` and, when there is one, ``fix``."""

    def __init__(self, message: str = "", fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


# -- the request -------------------------------------------------------------------------


class InvalidInput(Local2Error, ValueError):
    """The request cannot be done as asked; the message says why."""


class InvalidQuery(InvalidInput):
    """The question cannot be asked (empty, too long); the message says why."""


class InvalidId(InvalidInput):
    """An identifier breaks its rule; the message names the rule."""


class DocumentUnreadable(InvalidInput):
    """A document that cannot be read: encrypted, corrupt, of no supported format, or over a
    limit (the message names it, ``fix`` says which setting raises it); nothing was kept.

    ``reason`` is one of :data:`DOCUMENT_FAILURES`.
    """

    def __init__(self, message: str, reason: str, fix: str = "") -> None:
        super().__init__(message, fix)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.message} {self.fix}".strip()


class DocumentTooLarge(DocumentUnreadable):
    """A document of more bytes than may be read or kept (``documents.max_bytes``, a
    person's room for documents): refused before anything is stored."""


DOCUMENT_FAILURES = (
    "encrypted",  # needs a password
    "corrupt",  # not a readable file of its format (truncated, damaged)
    "unsupported",  # no reader for this format
    "too_large",  # more bytes than documents.max_bytes
    "too_many_pages",  # documents.max_pages
    "too_many_chars",  # documents.max_chars
    "archive",  # a zip container over its caps (members, unpacked size, ratio, method)
    "memory",  # documents.memory_mb
    "cpu",  # documents.cpu_s
    "timeout",  # documents.timeout_s (or the caller's deadline)
    "crashed",  # the reader stopped without a reply
    "cancelled",  # the caller gave up
)


class EvalFileError(InvalidInput):
    """A question set, a document corpus or an eval run's file that cannot be read: the
    message names the file and the line, ``fix`` what to change."""


class NotFound(Local2Error, LookupError):
    """No such session, turn, checkpoint or run (someone else's looks the same)."""


class UnknownTurn(NotFound):
    """No such session, turn or checkpoint."""


class UnknownRun(NotFound):
    """No research run with that id."""


class UnknownDocument(NotFound):
    """No document with that id among the person's own (someone else's looks the same)."""


class UnknownLibraryEntry(NotFound):
    """No entry with that id in the person's library (someone else's looks the same)."""


class UnknownEvalRun(NotFound):
    """No eval run with that id."""


class UnknownWatch(NotFound):
    """No watch with that id among the person's own (someone else's looks the same)."""


class Conflict(Local2Error, RuntimeError):
    """Not now: something else is going on with the same session or run."""


class SessionBusy(Conflict):
    """A turn of this session is already running."""


class RunBusy(Conflict):
    """The run is already going on (in this process or, on Postgres, in another one)."""


class RunNotReady(Conflict):
    """The research run is not in the state this asks for (paused, running or finished)."""


class NothingToStop(Conflict):
    """A Stop for a session with no turn running here, or one already answered."""


class CannotRetry(Conflict):
    """This answer cannot be tried again in the turn's state (the message says why)."""


class AwaitingApproval(Conflict):
    """The session's last turn waits for the person to approve or deny a tool call."""

    def __init__(self, request: Mapping[str, Any]) -> None:
        self.request = dict(request)
        tools = ", ".join(c["tool"] for c in request.get("calls") or [])
        super().__init__(
            f"Session '{request.get('session_id')}' is waiting for approval of {tools}: "
            f"approve or deny it first (POST {request.get('resume')})."
        )


# -- the parts ---------------------------------------------------------------------------


class Unavailable(Local2Error, RuntimeError):
    """A part LoCAL2 needs (the model server, the store, memory) does not answer."""


class WatchRunFailed(Unavailable):
    """A watch's research run did not finish (it is retried; the schedule goes on)."""


class StorageUnavailable(Unavailable):
    """The conversation store cannot be opened; ``fix`` says what to do about it."""


class StorageFull(Unavailable):
    """The disk under the data directory (or the database's) is full."""


class ChromaUnavailable(Unavailable):
    """The configured Chroma server cannot be reached; the message names the fix."""


class EmbeddingError(Unavailable):
    """Embedding failed; the message names the fix (``ollama serve``, ``ollama pull ...``)."""


class OcrUnavailable(Unavailable):
    """The OCR engine is not installed, or its shipped models are missing (the PDF reader
    names the pages it could not read instead)."""


class MemoryStoreError(Unavailable):
    """Memory cannot be used; the message is meant for people."""


class EmbedderMismatchError(MemoryStoreError):
    """A collection records another embedding model or prefix scheme than its name says."""


class JudgeTimeout(Unavailable):
    """The critic gave no grade in time."""


class ModelError(Local2Error):
    """The chat model could not produce an answer; ``fix`` says what to do about it."""

    def __str__(self) -> str:
        return f"{self.message} {self.fix}".strip()


class ModelUnavailable(Unavailable, ModelError):
    """The backend cannot be reached or the model is not there."""


class ModelNotPulled(ModelUnavailable):
    """Ollama answers, but the chosen model is not pulled (never silently replaced)."""


class FactParseError(ModelError, ValueError):
    """The model's reply is not the JSON the fact schema asks for."""


# -- configuration and stories -----------------------------------------------------------


class SettingsError(Local2Error):
    """A config file that cannot be used; the message names the file and the key."""


class StoryError(Local2Error):
    """A story file that cannot be used; the message names the file and the problem."""


class UnsafeToServe(SettingsError, RuntimeError):
    """Serving beyond this machine without what keeps strangers out (a token, host names)."""


# -- tools (what the model reads) --------------------------------------------------------


class ToolError(Local2Error):
    """A tool failed in a way the model should read, e.g. ``fetch failed: 404``.

    ``events`` are emitted like a result's (e.g. the fallbacks tried before the failure) and
    ``data`` is kept like a result's (e.g. the provider that failed last).
    """

    def __init__(
        self,
        message: str = "",
        events: list[tuple[str, dict[str, object]]] | None = None,  # (subject, its fields)
        # the tool's own account of the failure, in its own keys (JSON, as a result's data)
        data: dict[str, Any] | None = None,
        fix: str = "",
    ) -> None:
        super().__init__(message, fix)
        self.events = list(events or [])
        self.data = dict(data or {})


class SandboxError(ToolError):
    """A refused file access: ``str()`` is ``"<CODE>: <message>"``, what the model reads."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class FetchRefused(ToolError):
    """The URL must not be fetched; the message says why (shown as ``fetch error: ...``)."""


class ExtractionFailed(ToolError):
    """A bounded worker could not do its job; the message says why.

    ``reason`` names the limit or failure (``memory``, ``cpu``, ``time``, ``crashed``, or what
    the job reported), and ``peak_rss_mb`` the worker's peak resident memory, when known.
    """

    def __init__(
        self, message: str, reason: str = "error", peak_rss_mb: float = 0.0, fix: str = ""
    ) -> None:
        super().__init__(message, fix=fix)
        self.reason = reason
        self.peak_rss_mb = peak_rss_mb


class ExtractionTimeout(ToolError):
    """The deadline passed before the extraction worker answered; it was killed."""


class ExtractionCancelled(ToolError):
    """The tool call was cancelled while the extraction worker ran; it was killed."""


# -- outside the tree --------------------------------------------------------------------


class TurnCancelled(BaseException):
    """The person stopped the turn before its answer was published; nothing was recorded.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` on its way
    out of a node (the model client, the generate node naming model errors, a retry policy)
    turns it into an ordinary failure.
    """


class GaveWay(TurnCancelled):
    """An answered turn's background work (the critic's grade, memory's fact extraction) gave
    way to the person's next question: its model request was cancelled, its HTTP connection
    closed. Nothing is lost: the node that catches it defers the grade, or keeps the facts the
    rules find (docs/architecture.md, "A turn's path"). A ``BaseException`` like
    :class:`TurnCancelled`, so that no ``except Exception`` in the critic or the extractor
    turns it into a failed grade.
    """
