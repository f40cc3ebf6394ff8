"""A turn running in its own worker, so the answer can be handed over before the turn ends.

``publish`` puts the answer in the stream; ``critique`` and ``ingest`` run after it. A caller
that wants the answer first (``POST /query``) takes items until the answer and returns; one
that streams (``POST /query/stream``) may go away mid-turn. Either way the turn runs to its
end here (critic, memory, audit log), never cut off half-way by whoever was reading. The
critic and memory start once the answer has been handed to the reader (``handed_over``, see
:mod:`local2.service.chat._running`), not while it is on its way.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from local2.contracts import StreamItem, TurnPayload
from local2.errors import TurnCancelled
from local2.service.chat._running import POLL_S, RunningTurn

log = logging.getLogger(__name__)

_END = object()


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class BackgroundTurn:
    """A turn's items as its worker hands them over; iterate it to read them as they come,
    or take :meth:`until_answer` and leave the rest to finish on its own.

    The worker (:meth:`local2.service.chat.Turns.launch`) feeds :meth:`put` and calls
    :meth:`end`; items are those of ``agent.turns.stream``
    (:meth:`local2.service.chat.TurnRunner.stream`). An exception the turn raises is
    re-raised to the reader at the point it happened; a Stop asked for before the answer
    (``turn``) ends the reading at once, while the worker winds down on its own.
    """

    def __init__(
        self,
        on_done: Callable[[BackgroundTurn], None] | None = None,
        handed_over: threading.Event | None = None,
    ) -> None:
        self._items: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._on_done = on_done
        # Set when a reader takes the answer (the turn's worker waits for it, see TurnRunner.start).
        self.handed_over = handed_over or threading.Event()
        self.answered = False
        self.payload: TurnPayload | None = None  # the final payload, when the turn ended
        self.turn: RunningTurn | None = None  # the running turn, once launched
        self._ended = threading.Event()
        # An event loop's reader waiting for the next item (see answer()).
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._waiter_guard = threading.Lock()

    def put(self, item: StreamItem) -> None:
        """One item from the worker."""
        kind, data = item
        if kind == "answer":
            self.answered = True
        elif kind == "final":
            self.payload = data
        self._enqueue(item)

    def _enqueue(self, item: Any) -> None:
        self._items.put(item)
        with self._waiter_guard:
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop, woken = waiter
            loop.call_soon_threadsafe(_wake, woken)

    def end(self, failure: BaseException | None) -> None:
        """The worker has ended (the session's lock released), with ``failure`` if it failed."""
        if failure is not None:  # handed to the reader; logged if it came after the answer
            if self.answered:
                log.warning("turn failed after its answer: %s: %s", type(failure).__name__, failure)
            self._enqueue(("error", failure))
        self.handed_over.set()  # the turn is over: nothing waits for a reader any more
        self._enqueue(_END)
        self._ended.set()
        if self._on_done is not None:
            self._on_done(self)

    def _take(self, item: Any) -> StreamItem | None:
        """A queued item as the reader gets it: None at the end, the turn's error raised."""
        if item is _END:
            self._items.put(_END)  # later readers end too
            return None
        if item[0] == "error":
            raise item[1]
        taken: StreamItem = item
        return taken

    def __iter__(self) -> Iterator[StreamItem]:
        return self._read(hand_over=True)

    def _read(self, *, hand_over: bool) -> Iterator[StreamItem]:
        while True:
            try:
                item = self._items.get(timeout=POLL_S)
            except queue.Empty:
                if self.turn is not None and self.turn.stopping:
                    raise TurnCancelled(f"turn of session {self.turn.session_id} stopped") from None
                continue
            if (taken := self._take(item)) is None:
                return
            kind, data = taken
            if kind == "answer" and hand_over:
                self.hand_over()
            yield kind, data

    def hand_over(self) -> None:
        """The answer has been taken: the turn goes on to the critic and memory."""
        self.handed_over.set()

    def until_answer(self, *, hand_over: bool = True) -> TurnPayload:
        """The payload as ``publish`` made it (or the final one if the turn never published).

        ``hand_over=False``: the caller calls :meth:`hand_over` once the answer is on its way
        (an HTTP response sent); until then, for at most
        :data:`~local2.service.chat._running.HANDOVER_WAIT_S`, the critic and memory wait.
        """
        for kind, data in self._read(hand_over=hand_over):
            if kind in ("answer", "final"):
                payload: TurnPayload = data
                return payload
        raise RuntimeError("the turn ended without a payload")

    async def answer(self) -> TurnPayload:
        """:meth:`until_answer` (``hand_over=False``) for a reader on an event loop: the loop
        is woken when the answer comes, with no thread of its own waiting for it."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                woken: asyncio.Future[None] = loop.create_future()
                with self._waiter_guard:
                    registered = self._items.empty()
                    if registered:
                        self._waiter = (loop, woken)
                if registered:
                    await woken
                continue
            if (taken := self._take(item)) is None:
                raise RuntimeError("the turn ended without a payload")
            kind, data = taken
            if kind in ("answer", "final"):
                answered: TurnPayload = data
                return answered

    def until_final(self) -> TurnPayload:
        """The payload once critique and ingest have finished."""
        for kind, data in self:
            if kind == "final":
                final: TurnPayload = data
                return final
        raise RuntimeError("the turn ended without a payload")

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the turn to end; True if it did."""
        return self._ended.wait(timeout)
