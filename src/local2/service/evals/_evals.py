"""Eval runs as a service: start one, stream its progress, stop it, resume it, read and
compare runs. One object the CLI, the HTTP API and the app share (:attr:`Agent.evals`).

A run is a folder under ``<data dir>/evals/`` (:mod:`local2.evals._store`), whose manifest
names its owner: everything here is that person's (an admin may read everyone's, each read
written down), and someone else's run id answers exactly as an unknown one does
(:mod:`local2.service.access`). While a run goes, the process holds a lock file in its
folder, so a second process (a second ``--resume`` of the same run, or the app) is refused
it, and a run whose process was killed is seen as ``interrupted``, ready to resume.

The questions are answered by an agent beside the caller's (:meth:`Agent.beside`): on the
same store, so each question's session opens in time travel, with the run's own settings
(:mod:`local2.service.evals._setup`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from typing_extensions import Unpack

from local2.config import Settings
from local2.contracts import (
    LOCAL,
    EvalItem,
    EvalMode,
    EvalReport,
    EvalRunStart,
    Person,
    RunManifest,
    RunState,
)
from local2.errors import EvalFileError, InvalidInput, RunBusy
from local2.evals import EvalRun, Question, QuestionSet, load_set, make_manifest, select, summarize
from local2.service.access import Access
from local2.service.evals._answer import (
    Answerer,
    AskAnswerer,
    Asking,
    ResearchAnswerer,
    TurnService,
    UsageMeter,
)
from local2.service.evals._runner import QuestionLoop
from local2.service.evals._runs import EvalRuns, held_elsewhere, run_lock
from local2.service.evals._setup import (
    Grader,
    find_set,
    make_grader,
    run_settings,
    set_names,
    settings_record,
)
from local2.service.wiring import ModelParts

if TYPE_CHECKING:
    from filelock import FileLock

    from local2.graph import Services
    from local2.service.research import Research


class RunAgent(Protocol):
    """The agent answering a run (:class:`~local2.service.agent.Agent`, beside the caller's):
    its turns, its research runs, its services and settings."""

    settings: Settings
    services: Services

    @property
    def research(self) -> Research: ...

    @property
    def turns(self) -> TurnService: ...

    def close(self, wait_s: float = ...) -> None: ...


class BaseAgent(Protocol):
    """The caller's agent: runs are answered by agents beside it (same store, own settings)."""

    def beside(self, settings: Settings, **parts: Unpack[ModelParts]) -> RunAgent: ...


MODES: tuple[EvalMode, ...] = ("ask", "research")
MAX_CONCURRENCY = 16
CLOSE_WAIT_S = 10.0


class Answering:
    """An agent beside the caller's answering one run's questions, and what it needs."""

    def __init__(self, agent: RunAgent, mode: EvalMode, person: Person) -> None:
        self.agent = agent
        self.meter = UsageMeter()
        self.meter.attach(agent.services.chat_model)
        self.answerer: Answerer = (
            ResearchAnswerer(
                agent.research, Asking(person, self.meter, agent.research.index.set_aside)
            )
            if mode == "research"
            else AskAnswerer(
                agent.turns, Asking(person, self.meter, agent.services.turn_log.set_aside)
            )
        )

    def close(self) -> None:
        self.meter.detach(self.agent.services.chat_model)
        self.agent.close()


class Evals(EvalRuns):
    """Eval runs under ``<data dir>/evals``, answered beside ``base`` (without one, runs can
    be read, listed and compared, not run: :class:`EvalRuns`). ``parts`` replace what the
    answering agent would build from settings (a test's or a benchmark's model)."""

    def __init__(
        self,
        settings: Settings,
        access: Access,
        base: BaseAgent | None = None,
        **parts: Unpack[ModelParts],
    ) -> None:
        super().__init__(settings, access)
        self.base = base
        self.parts = parts

    # -- starting, resuming, stopping ------------------------------------------------------

    def sets(self) -> list[str]:
        """The sets the app and the API may run (``demo`` and ``<data dir>/eval-sets/``)."""
        return set_names(self.settings)

    def start(
        self,
        set_name: str,
        *,
        mode: str = "ask",
        model: str | None = None,
        backend: str | None = None,
        grader: str | None = None,
        limit: int | None = None,
        sample: int | None = None,
        seed: int | None = None,
        concurrency: int = 1,
        person: Person = LOCAL,
        any_path: bool = False,
    ) -> Iterator[EvalItem]:
        """Start a run of ``person``'s; everything is checked and the model chosen before
        anything runs (a bad set, flag or model raises here). ``any_path``: the set may be
        any path (the CLI); otherwise ``demo`` or a name in ``<data dir>/eval-sets/``."""
        checked_mode = self._mode(mode)
        self._concurrency(concurrency)
        qset = load_set(find_set(self.settings, set_name, any_path=any_path))
        chosen = select(qset.questions, limit, sample, seed)
        answering, judge = self._open(qset, checked_mode, model, backend, grader, person)
        try:
            services = answering.agent.services
            manifest = make_manifest(
                qset,
                chosen,
                mode=checked_mode,
                model=services.model_name,
                backend=services.backend,
                grader_model=judge.model,
                grader_backend=judge.backend,
                grader_prompt=judge.prompt,
                owner=person.name,
                settings=settings_record(answering.agent.settings, services, concurrency),
                limit=limit,
                sample=sample,
                seed=seed,
            )
            run = self.store.create(manifest)
        except BaseException:
            answering.close()
            raise
        return self._drive(run, chosen, answering, judge, concurrency, resumed=False)

    def resume(
        self, run_id: str, *, concurrency: int | None = None, person: Person = LOCAL
    ) -> Iterator[EvalItem]:
        """Go on with ``person``'s run: only the questions without a record (and those
        recorded as failed) are asked, with the model, grader and settings it started with."""
        run = self._writable(run_id, person)
        manifest = run.manifest()
        if run_id in self._active or held_elsewhere(run):
            raise RunBusy(f"Eval run {run_id} is already running.")
        qset = load_set(Path(manifest["set"]["path"]))
        if qset.fingerprint != manifest["set"]["fingerprint"]:
            raise EvalFileError(
                f"The set at {manifest['set']['path']} has changed since run {run_id} began.",
                fix="restore the set as it was, or start a new run",
            )
        questions = self._left(run, manifest, qset)
        k = concurrency or int(manifest["settings"].get("concurrency") or 1)
        self._concurrency(k)
        grader = manifest["grader"]
        answering, judge = self._open(
            qset,
            manifest["mode"],
            manifest["model"],
            manifest["backend"],
            None if grader["is_answerer"] else grader["model"],
            person,
            grader_backend=None if grader["is_answerer"] else grader["backend"],
        )
        return self._drive(run, questions, answering, judge, k, resumed=True)

    def stop(self, run_id: str, person: Person = LOCAL) -> bool:
        """Stop ``person``'s run going in this process; False when none is."""
        self._writable(run_id, person)
        with self._guard:
            loop = self._active.get(run_id)
        if loop is None:
            return False
        loop.stop()
        return True

    def wait_ended(self, run_id: str, timeout: float) -> bool:
        """Whether ``run_id`` stopped going here within ``timeout`` seconds (its status is
        written by then): a Stop can then say how the run ended, not that it is ending."""
        with self._guard:
            return self._guard.wait_for(lambda: run_id not in self._active, timeout)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Stop every run going here (each can be resumed) and wait, at most ``wait_s``, for
        their readers to settle them (a reader that has gone leaves its run ``interrupted``)."""
        with self._guard:
            loops = list(self._active.values())
        for loop in loops:
            loop.stop()
        with self._guard:
            self._guard.wait_for(lambda: not self._active, wait_s)

    # -- the parts -------------------------------------------------------------------------

    def _mode(self, mode: str) -> EvalMode:
        for known in MODES:
            if mode == known:
                return known
        raise InvalidInput(f"--mode {mode!r}: use ask or research.")

    def _concurrency(self, k: int) -> None:
        if not 1 <= k <= MAX_CONCURRENCY:
            raise InvalidInput(f"--concurrency {k}: use 1 to {MAX_CONCURRENCY}.")

    def _left(self, run: EvalRun, manifest: RunManifest, qset: QuestionSet) -> list[Question]:
        by_id = qset.by_id()
        missing = [i for i in manifest["selection"]["ids"] if i not in by_id]
        if missing:
            raise EvalFileError(f"The set no longer has question {missing[0]!r}.")
        done = run.done()
        return [by_id[i] for i in manifest["selection"]["ids"] if i not in done]

    def _open(
        self,
        qset: QuestionSet,
        mode: EvalMode,
        model: str | None,
        backend: str | None,
        grader: str | None,
        person: Person,
        grader_backend: str | None = None,
    ) -> tuple[Answering, Grader]:
        """The agent answering the run (with the run's settings) and its grader."""
        if self.base is None:
            raise InvalidInput("These eval runs can be read here, not run.")
        settings = run_settings(self.settings, qset)
        parts: ModelParts = {"memory": None, "memory_shelf": None, "critic": None}
        parts.update(self.parts)
        if "chat_model" not in self.parts:
            parts.update({"backend": backend, "model": model})
        agent = self.base.beside(settings, **parts)
        try:
            judge = make_grader(settings, agent.services, grader, grader_backend)
            return Answering(agent, mode, person), judge
        except BaseException:
            agent.close()
            raise

    def _drive(
        self,
        run: EvalRun,
        questions: list[Question],
        answering: Answering,
        judge: Grader,
        concurrency: int,
        *,
        resumed: bool,
    ) -> Iterator[EvalItem]:
        """The run under its lock: ``run``, then the loop's items; once it is settled (its
        status written, the lock released), ``final``."""
        from filelock import Timeout  # lazy: filelock: ~36 ms, 21 modules at import

        lock = run_lock(run)
        status: RunState = "failed"
        note = ""
        loop: QuestionLoop | None = None
        try:
            try:
                lock.acquire()
            except Timeout:
                raise RunBusy(f"Eval run {run.run_id} is already running.") from None
            manifest = run.update(status="running")
            total = len(manifest["selection"]["ids"])
            loop = QuestionLoop(
                run,
                questions,
                answering.answerer,
                judge.grade,
                total=total,
                concurrency=concurrency,
            )
            with self._guard:
                if run.run_id in self._active:
                    raise RunBusy(f"Eval run {run.run_id} is already running.")
                self._active[run.run_id] = loop
            yield ("run", _run_item(manifest, total - len(questions), concurrency, resumed))
            try:
                yield from loop
            except (GeneratorExit, KeyboardInterrupt):
                status = "stopped"  # the reader went away (or Ctrl-C): resume it later
                raise
            except Exception as exc:
                note = getattr(exc, "message", "") or str(exc) or type(exc).__name__
                raise
            status = "stopped" if loop.stopped.is_set() else "done"
            run.export_csv()
        finally:
            self._settle(run, lock, loop, status, note)
            answering.close()
        yield ("final", self._report(run, status))

    def _settle(
        self, run: EvalRun, lock: FileLock, loop: QuestionLoop | None, status: RunState, note: str
    ) -> None:
        """The run's status written, then it leaves the runs going here (so whoever waits
        for that reads its status), and its lock let go (nothing to do if never taken)."""
        try:
            if lock.is_locked:
                if note:
                    run.update(status=status, note=note[:500])
                else:
                    run.update(status=status)
        finally:
            with self._guard:
                if loop is not None and self._active.get(run.run_id) is loop:
                    del self._active[run.run_id]
                    self._guard.notify_all()
            if lock.is_locked:
                lock.release()

    def _report(self, run: EvalRun, status: RunState) -> EvalReport:
        manifest = run.manifest()
        summary = summarize(run.records(), len(manifest["selection"]["ids"]))
        return EvalReport(manifest=manifest, status=status, summary=summary)


def _run_item(
    manifest: RunManifest, recorded: int, concurrency: int, resumed: bool
) -> EvalRunStart:
    grader = manifest["grader"]
    return {
        "run_id": manifest["run_id"],
        "set": manifest["set"]["name"],
        "mode": manifest["mode"],
        "model": manifest["model"],
        "backend": manifest["backend"],
        "grader": grader["model"],
        "grader_is_answerer": grader["is_answerer"],
        "total": len(manifest["selection"]["ids"]),
        "recorded": recorded,
        "concurrency": concurrency,
        "resumed": resumed,
    }
