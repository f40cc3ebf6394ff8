"""The question loop of an eval run: ``concurrency`` workers answer, grade and record the
questions, and the caller reads progress as it happens.

Each question is answered (:mod:`local2.service.evals._answer`), graded, scored and appended
to the run's ``results.jsonl`` as one flushed line before the next item is handed out, so a
run killed at any moment loses only the questions in flight. A question whose answer fails
is recorded with its error and asked again on resume; a part LoCAL2 needs that does not
answer (:class:`~local2.errors.Unavailable`: the model server is down) ends the run
instead of recording every question as failed. A Stop ends the questions in flight before
their answer; they are not recorded, so a resumed run asks them.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from local2.contracts import EvalItem, EvalProgress, QuestionResult
from local2.errors import TurnCancelled, Unavailable
from local2.evals import EvalRun, GraderVerdict, Question, answered, failed, latest
from local2.service.evals._answer import Answerer

Grade = Callable[[Question, str], GraderVerdict]


def _bucket(result: QuestionResult) -> str:
    if result["error"] is not None:
        return "errors"
    return result["grade"] or "ungraded"


@dataclass
class Tally:
    """The run's grades so far, over the last record of each question (kept as counts, so
    a progress item costs the same at question 4,000 as at question 1)."""

    run_id: str
    total: int
    last: dict[str, QuestionResult] = field(default_factory=dict)
    answered_now: int = 0
    running: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.counts.update(_bucket(r) for r in self.last.values())

    def record(self, result: QuestionResult) -> None:
        before = self.last.get(result["id"])
        if before is not None:
            self.counts[_bucket(before)] -= 1
        self.counts[_bucket(result)] += 1
        self.last[result["id"]] = result
        self.answered_now += 1

    def progress(self) -> EvalProgress:
        elapsed = time.monotonic() - self.started
        left = self.total - (len(self.last) - self.counts["errors"])
        eta = elapsed / self.answered_now * left if self.answered_now else None
        return EvalProgress(
            run_id=self.run_id,
            total=self.total,
            recorded=len(self.last),
            answered_now=self.answered_now,
            correct=self.counts["correct"],
            incorrect=self.counts["incorrect"],
            not_attempted=self.counts["not_attempted"],
            ungraded=self.counts["ungraded"],
            errors=self.counts["errors"],
            running=list(self.running),
            elapsed_s=round(elapsed, 3),
            eta_s=round(eta, 1) if eta is not None else None,
        )


class QuestionLoop:
    """Answers ``questions`` for ``run`` with ``concurrency`` workers; iterate it for the
    items (``progress`` and ``question``). Closing the iterator early stops the run."""

    def __init__(
        self,
        run: EvalRun,
        questions: Sequence[Question],
        answer: Answerer,
        grade: Grade,
        *,
        total: int,
        concurrency: int = 1,
    ) -> None:
        self.run = run
        self.questions = list(questions)
        self.answer = answer
        self.grade = grade
        self.concurrency = max(1, concurrency)
        self.tally = Tally(run.run_id, total, {r["id"]: r for r in latest(run.records())})
        self.stopped = threading.Event()
        self.failure: BaseException | None = None
        self._next = iter(self.questions)
        self._take = threading.Lock()
        self._out: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

    def stop(self) -> None:
        """Ask no more questions and end the ones in flight (they are asked on resume)."""
        self.stopped.set()
        self.answer.stop()

    def __iter__(self) -> Iterator[EvalItem]:
        yield ("progress", self.tally.progress())
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="local2-eval")
        workers = [pool.submit(self._work) for _ in range(self.concurrency)]
        left = len(workers)
        try:
            while left:
                kind, data = self._out.get()
                if kind == "exit":  # a worker's last item: nothing of its own comes after
                    left -= 1
                    continue
                if kind == "started":
                    self.tally.running.append(data)
                elif kind == "ended":
                    self.tally.running.remove(data)
                else:
                    self.tally.record(data)
                    yield ("question", data)
                yield ("progress", self.tally.progress())
        finally:
            if not all(w.done() for w in workers):  # the reader went away: stop the run
                self.stop()
            pool.shutdown(wait=True)
        if self.failure is not None:
            raise self.failure

    def _take_next(self) -> Question | None:
        with self._take:
            if self.stopped.is_set():
                return None
            return next(self._next, None)

    def _work(self) -> None:
        try:
            self._answer_each()
        finally:
            self._out.put(("exit", None))

    def _answer_each(self) -> None:
        while (question := self._take_next()) is not None:
            self._out.put(("started", question.id))
            try:
                result = self._ask(question)
                self.run.append(result)  # one flushed line: a kill after it loses nothing
                self._out.put(("question", result))
            except TurnCancelled:
                pass  # stopped before its answer: not recorded, asked again on resume
            except Exception as exc:  # a part that does not answer, a disk that cannot take
                self.failure = exc  # the line: every question would fail the same way
                self.stop()
            finally:
                self._out.put(("ended", question.id))

    def _ask(self, question: Question) -> QuestionResult:
        started = time.monotonic()
        try:
            asked = self.answer(question)
        except Unavailable:
            raise
        except Exception as exc:  # this question failed: recorded, asked again on resume
            if self.stopped.is_set():
                raise TurnCancelled("the eval run was stopped") from exc
            message = getattr(exc, "message", "") or str(exc) or type(exc).__name__
            return failed(question, message[:500], time_s=time.monotonic() - started)
        verdict = self.grade(question, asked.answer)
        return answered(
            question,
            asked.answer,
            verdict,
            asked.reached,
            tools=asked.tools,
            time_s=asked.time_s,
            tokens=asked.tokens,
            session_id=asked.session_id,
        )
