"""Two respondents answer one question (another model or temperature), side by side.

- who answers (respondent ``a`` is the agent's model, ``b`` another model or
  temperature) and the services each respondent runs with;
- one respondent's answer loop as a subgraph, run once per respondent as
  parallel branches (LangGraph ``Send``);
- the nodes after both answered: publish both, grade and compare them,
  remember them, record the judge's vote;
- the arena's votes a compare turn leaves.

Where these nodes join the chat graph: :mod:`local2.graph._graph`; what a person does
afterwards (prefer an answer): :mod:`local2.service.chat._ratings`.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Mapping
from typing import Any, NotRequired, cast

from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send, StreamMode

from local2 import events
from local2.contracts import (
    CompareSpec,
    Critique,
    EventEntry,
    Pairwise,
    Respondent,
    RespondentSpec,
    Verdict,
)
from local2.errors import GaveWay, InvalidInput, ModelError
from local2.graph._after import (
    defer,
    let_others_first,
    memory_lookup,
    preview,
    started_from,
    turn_payload,
    turn_record,
)
from local2.graph._answer import add_answer_loop
from local2.graph._turn import (
    RESET,
    RESPONDENT_IDS,
    Dialog,
    ModelFactory,
    Services,
    TurnContext,
    TurnState,
    TurnUpdate,
    event,
    push,
    remember_turn,
)
from local2.models import Cancellation
from local2.storage import VoteLog

# --- spec -------------------------------------------------------------------------------
# Who answers a compare turn, and with which services.
#
# Respondent ``a`` is the agent's own model; ``b`` is another model, another temperature, or
# both. A turn compares when its context carries ``compare`` (a
# :class:`~local2.contracts._turn.CompareSpec`, the second respondent); it is context, not
# state, so the next turn is an ordinary one unless it asks again. Each respondent runs with
# a copy of the services holding its own chat model; tools, memory, the critic and the tool
# runner are shared.

MAX_TEMPERATURE = 2.0


def compare_spec(model: str | None = None, temperature: float | None = None) -> CompareSpec | None:
    """The second respondent asked for, or None when neither is given.

    Raises :class:`~local2.errors.InvalidInput` with a message for the person when a value
    cannot be used.
    """
    if model is None and temperature is None:
        return None
    if model is not None and not model.strip():
        raise InvalidInput("The second model's name is empty: give a model name, e.g. llama3.2:3b.")
    if temperature is not None and not 0.0 <= float(temperature) <= MAX_TEMPERATURE:
        raise InvalidInput(
            f"The second respondent's temperature must be between 0 and {MAX_TEMPERATURE:g}, "
            f"got {temperature!r}."
        )
    return {
        "model": model.strip() if model else None,
        "temperature": None if temperature is None else float(temperature),
    }


def label(model: str, temperature: float | None) -> str:
    """How a respondent is named in the arena: the model, and its temperature when set."""
    return model if temperature is None else f"{model} (t={temperature:g})"


def default_factory(services: Services) -> ModelFactory:
    """Make the second respondent's chat model the way the agent's was made, from settings.

    A model missing on the Ollama server is a clear error before the turn starts.
    """
    made: dict[tuple[str | None, float | None], Any] = {}
    lock = threading.Lock()

    def make(model: str | None, temperature: float | None) -> Any:
        # lazy: local2.models, local2.ports: ~7 ms, 3 modules at import
        from local2.models import make_chat_model

        backend = services.backend
        if backend not in ("ollama", "openai", "embedded"):
            raise ModelError(
                f"Comparing needs a second model, but this agent's model is a {backend!r} one.",
                "Run with --backend ollama (or give the agent a model_factory).",
            )
        key = (model, temperature)
        with lock:
            if key in made:
                return made[key]
        settings = services.settings
        if temperature is not None:
            generator = settings.generator.model_copy(update={"temperature": temperature})
            settings = settings.model_copy(update={"generator": generator})
        # A model Ollama does not have is a clear error here (ModelNotPulled), before answers.
        chosen = make_chat_model(settings, backend, model or services.model_name)
        with lock:
            made[key] = chosen
        return chosen

    return make


def respondent_services(
    services: Services, respondent_id: str, spec: CompareSpec | None
) -> Services:
    """The services respondent ``respondent_id`` answers with (``a``: the agent's own)."""
    if respondent_id == "a" or not spec:
        return services
    if services.model_factory is None:
        services.model_factory = default_factory(services)
    chosen = services.model_factory(spec.get("model"), spec.get("temperature"))
    return dataclasses.replace(
        services,
        chat_model=chosen.model,
        model_name=chosen.name,
        backend=chosen.backend,
        native_tools=getattr(chosen, "native_tools", True),
    )


def specs(services: Services, spec_b: CompareSpec) -> dict[str, RespondentSpec]:
    """Both respondents as they are recorded: model, temperature and arena label."""
    temperature_a = services.settings.generator.temperature
    model_b = spec_b.get("model") or services.model_name
    temperature_b = spec_b.get("temperature")
    if temperature_b is None:
        temperature_b = temperature_a
    return {
        "a": {
            "model": services.model_name,
            "temperature": temperature_a,
            "label": label(services.model_name, temperature_a),
        },
        "b": {
            "model": model_b,
            "temperature": temperature_b,
            "label": label(model_b, temperature_b),
            "spec": CompareSpec(**spec_b),
        },
    }


# --- votes ------------------------------------------------------------------------------
# The arena's votes a compare turn leaves: the judge's when it compares, the person's when
# they prefer an answer (:mod:`local2.service.chat._ratings`).


def votes_of(services: Services) -> VoteLog:
    """The arena's vote log, opened on first use."""
    if services.votes is None:
        from local2.storage import open_votes  # lazy: local2.storage: ~76 ms, 4 modules at import

        services.votes = open_votes(services.settings)
    return services.votes


def record_vote(services: Services, state: Mapping[str, Any], voter: str, winner: str) -> None:
    """Count ``winner`` (a, b or tie) as ``voter``'s verdict on the turn's two models."""
    pairwise = state.get("pairwise") or {}
    labels = {rid: s.get("label") or "" for rid, s in (pairwise.get("specs") or {}).items()}
    votes_of(services).record(
        session_id=state.get("session_id") or "",
        query_id=pairwise.get("query_id") or state.get("query_id") or "",
        voter=voter,  # type: ignore[arg-type]  # a label the vote log checks
        model_a=labels.get("a", ""),
        model_b=labels.get("b", ""),
        winner=winner,
    )


# --- respond ----------------------------------------------------------------------------
# One respondent of a compare turn: the chat graph's generate/tool loop as a subgraph.
#
# The ``respond`` node is sent once per respondent (LangGraph ``Send``), so both run as
# parallel branches of one super-step, each with its own working state: messages, thinking,
# tool calls, memory hits. The subgraph is the very loop the chat graph runs
# (:func:`local2.graph._answer.add_answer_loop`), run with the respondent's context (its own
# chat model; tools, memory and the critic shared), and it checkpoints under its own
# namespace, so a tool call that waits for approval pauses just
# that branch and resumes it. Its events carry ``respondent_id``; its tokens and thinking are
# forwarded to the turn's stream as ``{"respondent": {id, kind, text}}`` items.

# What both respondents start from: the question, its id and clock, the history and the
# working messages after receive (and recall) - the same for both.
SHARED = ("query", "session_id", "query_id", "started_at", "history_head", "messages")


class RespondentState(TurnState):
    respondent_id: str
    respondent_spec: NotRequired[CompareSpec | None]


def build_respondent_graph(default: TurnContext) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The answer loop as a subgraph; :func:`respond` runs it with its respondent's context."""
    graph = StateGraph(RespondentState, context_schema=TurnContext)
    add_answer_loop(graph, default, END)
    graph.add_edge(START, "generate")
    return graph.compile(name="respondent")


def fan_out(state: TurnState) -> list[Send]:
    """Send the question to both respondents, each with its own spec."""
    specs = (state.get("pairwise") or {}).get("specs") or {}
    base = {key: state.get(key) for key in SHARED}
    base["memory_hits"] = list(state.get("memory_hits") or [])
    return [
        Send("respond", {**base, "respondent_id": rid, "respondent_spec": _asked(specs, rid)})
        for rid in RESPONDENT_IDS
    ]


def _asked(specs: dict[str, RespondentSpec], rid: str) -> CompareSpec | None:
    """What the turn asked of respondent ``rid`` (the second one's model and temperature)."""
    spec = specs.get(rid)
    return spec.get("spec") if spec else None


def record_of(values: RespondentState, rid: str, error: str | None = None) -> Respondent:
    """What a respondent's run leaves for the turn: its answer and how it got there."""
    return {
        "respondent_id": rid,
        "model": values.get("model") or "",
        "backend": values.get("backend") or "",
        "answer": "" if error else values.get("answer") or "",
        "thinking": [t for t in values.get("thinking") or [] if t],
        "tool_calls": list(values.get("tool_calls") or []),
        "memory_hits": list(values.get("memory_hits") or []),
        "error": error,
    }


def _forward(rid: str, mode: str, data: Any) -> None:
    """Pass a subgraph stream item on to the turn's stream."""
    if mode == "custom":
        push(data)
        return
    chunk, meta = data
    if meta.get("langgraph_node") != "generate" or not isinstance(chunk, AIMessageChunk):
        return
    reasoning = chunk.additional_kwargs.get("reasoning_content")
    if reasoning:
        push({"respondent": {"id": rid, "kind": "thinking", "text": str(reasoning)}})
    if isinstance(chunk.content, str) and chunk.content:
        push({"respondent": {"id": rid, "kind": "token", "text": chunk.content}})


def respond(
    state: RespondentState,
    runtime: Runtime[TurnContext],
    config: RunnableConfig,
    *,
    loop: CompiledStateGraph[Any, Any, Any, Any],
) -> TurnUpdate:
    """Run one respondent to its answer, with its own services (its chat model). A model
    that fails leaves an ``error`` instead of failing the turn: the other respondent's
    answer still counts."""
    rid = state["respondent_id"]
    own = respondent_services(runtime.context.services, rid, state.get("respondent_spec"))
    context = dataclasses.replace(runtime.context, services=own)
    values = state
    modes: list[StreamMode] = ["custom", "messages", "values"]
    try:
        for mode, data in loop.stream(state, config, context=context, stream_mode=modes):
            if mode == "values":  # the respondent's state, as LangGraph hands it out
                values = cast(RespondentState, data)
            else:
                _forward(rid, mode, data)
    except ModelError as exc:
        message = f"{exc.message} {exc.fix}".strip()
        return {
            "respondents": {rid: record_of(values, rid, error=message)},
            "event_log": list(values.get("event_log") or []),
        }
    return {
        "respondents": {rid: record_of(values, rid)},
        "event_log": list(values.get("event_log") or []),
    }


# --- pair -------------------------------------------------------------------------------
# The compare turn's own nodes, around the two respondents (docs/architecture.md, "A turn's path").
#
# ```
# compare -> respond(a) | respond(b) -> publish_pair -> critique_pair | ingest_pair -> settle_pair
# ```
# - ``compare``: name both respondents (and check the second model is there) before anyone
#   answers.
# - ``publish_pair``: announce both answers; respondent ``a``'s continues the history until
#   the person prefers ``b`` (:mod:`local2.service.chat._ratings`), and is the turn's answer
#   meanwhile; ``b``'s stays in the checkpoint.
# - ``critique_pair``: the judge grades each answer, then compares them in both orders
#   (:mod:`local2.critic._pairwise`) and emits ``pairwise.result``; or, when the person's next
#   question comes first, gives way: the pair is graded later (:mod:`local2.graph._after`).
# - ``ingest_pair``: both answers become engrams, each with its ``respondent_id``.
# - ``settle_pair``: once both are done, the engrams get their grade and ``pairwise_winner``,
#   and the judge's verdict becomes an arena vote (for a pair graded later, when it is).

log = logging.getLogger(__name__)


def respondent_view(state: TurnState | Mapping[str, Any], rid: str) -> RespondentState:
    """The turn as respondent ``rid`` answered it: what critique and ingest read."""
    own: Respondent = (state.get("respondents") or {}).get(rid) or {}
    return {
        **state,  # type: ignore[typeddict-item]  # the turn's state, as a respondent saw it
        "respondent_id": rid,
        "respondent_spec": None,
        "answer": own.get("answer") or "",
        "thinking": list(own.get("thinking") or []),
        "tool_calls": list(own.get("tool_calls") or []),
        "memory_hits": list(own.get("memory_hits") or []),
        "model": own.get("model") or "",
        "backend": own.get("backend") or "",
        "critique": own.get("critique"),
    }


def compare(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
    spec_b: CompareSpec = runtime.context.compare or {"model": None, "temperature": None}
    named = specs(services, spec_b)
    respondent_services(services, "b", spec_b)  # a missing model fails here, before answers
    started = event(
        state,
        events.COMPARE_STARTED,
        query_id=state.get("query_id"),
        respondents={rid: named[rid]["label"] for rid in RESPONDENT_IDS},
        respondent_id=None,
    )
    return {
        "pairwise": {
            "query_id": state["query_id"],
            "parent_head": state.get("history_head"),
            "specs": named,
            "winner": None,
            "preferred": None,
            "shown": "a",
        },
        "respondents": RESET,
        "event_log": [started],
    }


def _complete(state: TurnState) -> dict[str, Respondent]:
    """Both records, with the model filled in for one that failed before answering."""
    pairwise: Pairwise = state.get("pairwise") or {}
    named = pairwise.get("specs") or {}
    records = dict(state.get("respondents") or {})
    for rid in RESPONDENT_IDS:
        record = Respondent(**(records.get(rid) or {"respondent_id": rid}))  # a copy
        spec = named.get(rid)
        record.setdefault("temperature", spec["temperature"] if spec else None)
        if not record.get("model"):
            record["model"] = (spec["model"] if spec else None) or ""
        records[rid] = record
    return records


def publish_pair(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    records = _complete(state)
    shown = _shown(records)
    log_entries = _answer_events(state, records)
    chosen = records[shown]
    update = _shown_update(state, chosen, shown)
    head = _append_shown(state, runtime.context.services, update, records, log_entries, shown)
    records[shown] = {**records[shown], "turn_id": head}
    return {
        **update,
        "respondents": records,
        "history_head": head,
        "turn_count": state.get("turn_count", 0) + 1,
        "event_log": log_entries,
    }


def _shown(records: dict[str, Respondent]) -> str:
    """The respondent whose answer is shown: ``a``'s, unless only ``b`` answered."""
    answered = [rid for rid in RESPONDENT_IDS if (records[rid].get("answer") or "").strip()]
    if not answered:
        reasons = "; ".join(f"{rid}: {records[rid].get('error')}" for rid in RESPONDENT_IDS)
        raise ModelError(f"Neither respondent answered ({reasons}).")
    return answered[0]


def _answer_events(state: TurnState, records: dict[str, Respondent]) -> list[EventEntry]:
    """Each respondent's generation event, and for an answer its dialog (also pushed)."""
    log_entries: list[EventEntry] = []
    for rid in RESPONDENT_IDS:
        answer = records[rid].get("answer") or ""
        log_entries.append(
            event(
                state,
                events.RESPONSE_GENERATION,
                session_id=state["session_id"],
                query_id=state["query_id"],
                answer_chars=len(answer),
                thinking_chars=sum(len(t) for t in records[rid].get("thinking") or []),
                tool_calls=len(records[rid].get("tool_calls") or []),
                model=records[rid].get("model"),
                error=records[rid].get("error"),
                respondent_id=rid,
            )
        )
        if answer:
            dialog: Dialog = {
                "session_id": state["session_id"],
                "query": state["query"],
                "answer": answer,
            }
            log_entries.append(
                event(
                    state,
                    events.ANSWER_DIALOG,
                    **{**dialog, "answer": preview(answer)},
                    respondent_id=rid,
                )
            )
            push({"dialog": {**dialog, "respondent_id": rid}})
    return log_entries


def _shown_update(state: TurnState, chosen: Respondent, shown: str) -> TurnUpdate:
    """The turn's answer becomes the shown respondent's (its lists replace the turn's)."""
    pairwise: Pairwise = {**(state.get("pairwise") or {}), "shown": shown}
    return {
        "answer": chosen.get("answer") or "",
        "model": chosen.get("model") or "",
        "backend": chosen.get("backend") or "",
        "thinking": [RESET, *(chosen.get("thinking") or [])],
        "tool_calls": [RESET, *(chosen.get("tool_calls") or [])],
        "memory_hits": [RESET, *(chosen.get("memory_hits") or [])],
        "pairwise": pairwise,
    }


def _append_shown(
    state: TurnState,
    services: Services,
    update: TurnUpdate,
    records: dict[str, Respondent],
    log_entries: list[EventEntry],
    shown: str,
) -> str:
    """The shown answer continues the history: its turn is appended to the log and its
    payload pushed; the new head's id."""
    chosen = records[shown]
    after = {
        **state,
        **{k: v for k, v in update.items() if k not in ("thinking", "tool_calls", "memory_hits")},
        "thinking": list(chosen.get("thinking") or []),
        "tool_calls": list(chosen.get("tool_calls") or []),
        "memory_hits": list(chosen.get("memory_hits") or []),
        "respondents": records,
        "event_log": [*(state.get("event_log") or []), *log_entries],
    }
    payload = turn_payload(after)
    record = turn_record(payload)
    record["respondent_id"] = shown
    head = services.turn_log.append(
        parent_id=state.get("history_head"),
        session_id=state["session_id"] or "",
        query_id=state["query_id"],
        user=state["query"],
        assistant=chosen.get("answer") or "",
        record=record,
    )
    push({"payload": payload})
    return head


def critique_pair(
    state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> TurnUpdate:
    services = runtime.context.services
    if services.critic is None:
        return {}
    try:
        let_others_first(runtime.context.give_way)
        critiques, verdict = judge_respondents(state, services, runtime.context.give_way)
    except GaveWay:  # the person's next question came first: graded later
        return defer(state, config, pair=True)
    return pair_graded(state, services, critiques, verdict)


def judge_respondents(
    state: TurnState | Mapping[str, Any], services: Services, give_way: Cancellation | None = None
) -> tuple[dict[str, Critique], Verdict]:
    """The judge grades each answer, then compares them in both orders (the critic is on);
    :class:`~local2.errors.GaveWay` when ``give_way`` is set first."""
    from local2.critic import judge_pair  # lazy: yaml, local2.critic: ~64 ms, 21 modules at import

    views = {rid: respondent_view(state, rid) for rid in RESPONDENT_IDS}
    records = state.get("respondents") or {}
    lookups = {rid: memory_lookup(views[rid], services) for rid in RESPONDENT_IDS}
    return judge_pair(
        services.critic,  # type: ignore[arg-type]  # judging a pair needs the real judge (its chat model), not any grader
        state["query"],
        records.get("a") or {},
        records.get("b") or {},
        lookups,
        services.listing_tools(),
        give_way,
    )


def pair_graded(
    state: TurnState | Mapping[str, Any],
    services: Services,
    critiques: dict[str, Critique],
    verdict: Verdict,
    *,
    late: bool = False,
) -> TurnUpdate:
    """Keep both grades and the verdict: their events (``late``: given after the session's
    next question), the shown answer's note in the turn log, the state update."""
    records = state.get("respondents") or {}
    pairwise: Pairwise = {**(state.get("pairwise") or {})}
    labels = {rid: spec.get("label") for rid, spec in (pairwise.get("specs") or {}).items()}
    common = {"query_id": state.get("query_id"), "session_id": state.get("session_id")}
    if late:
        common["late"] = True
    log_entries = [
        event(
            state,
            events.CRITIQUE_RESULT,
            score=critiques[rid].get("score"),
            feedback=critiques[rid].get("feedback", ""),
            flags=list(critiques[rid].get("flags", [])),
            **common,
            respondent_id=rid,
        )
        for rid in RESPONDENT_IDS
    ]
    log_entries.append(
        event(state, events.PAIRWISE_RESULT, **verdict, **common, models=labels, respondent_id=None)
    )
    pairwise["winner"], pairwise["judge"] = verdict["winner"], verdict
    shown = pairwise.get("shown") or "a"
    for rid in RESPONDENT_IDS:  # so a resumed session shows the grade of the answer it shows
        turn_id = (records.get(rid) or {}).get("turn_id")  # (b's, once the person chose it)
        if turn_id:
            services.turn_log.note(str(turn_id), "critique", dict(critiques[rid]))
    return {
        "respondents": {rid: {"critique": critiques[rid]} for rid in RESPONDENT_IDS},
        "pairwise": pairwise,
        "critique": critiques[shown],
        "event_log": log_entries,
    }


def ingest_pair(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    """Both answers into memory, each as its own engram (see :func:`ingest`). Facts are
    distilled from the turn of the answer shown only: two answers must not each set what
    the person said, nor one's claims supersede the other's."""
    services = runtime.context.services
    engrams: dict[str, Respondent] = {}
    log_entries: list[Any] = []
    shown = (state.get("pairwise") or {}).get("shown") or "a"
    settings = services.settings
    no_facts = dataclasses.replace(
        services,
        settings=settings.model_copy(
            update={"memory": settings.memory.model_copy(update={"facts": "off"})}
        ),
    )
    for rid in RESPONDENT_IDS:
        own = services if rid == shown else no_facts
        update = remember_turn(respondent_view(state, rid), own, runtime.context.give_way)
        for entry in update.get("event_log") or []:
            log_entries.append(entry)
            said: Mapping[str, Any] = entry if isinstance(entry, dict) else {}
            if said.get("subject") == events.MEMORY_INGESTED and said.get("id"):
                engrams[rid] = {"engram_id": said["id"]}
    if runtime.context.memory_written is not None:
        runtime.context.memory_written()
    return {"respondents": engrams, "event_log": log_entries} if log_entries else {}


def settle_pair(
    state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig
) -> TurnUpdate:
    """Once graded and stored: annotate the engrams, and count the judge's vote. A grade
    that gave way to the next question does both when it is given, from this checkpoint
    (the engrams' ids are in it)."""
    query_id = state.get("query_id") or ""
    owed = (state.get("pending_grades") or {}).get(query_id)
    if owed is None:
        mark_and_vote(state, runtime.context.services)
        return {}
    return {"pending_grades": {query_id: {**owed, "checkpoint_id": started_from(config)}}}


def mark_and_vote(state: TurnState | Mapping[str, Any], services: Services) -> None:
    """The engrams get their grade and ``pairwise_winner``; the judge's verdict becomes an
    arena vote."""
    pairwise = state.get("pairwise") or {}
    records = state.get("respondents") or {}
    winner = pairwise.get("winner")
    store = services.memory_for(state.get("owner"))
    if store is not None:
        for rid in RESPONDENT_IDS:
            engram = (records.get(rid) or {}).get("engram_id")
            if not engram:
                continue
            # the engram's Chroma metadata to merge
            fields: dict[str, Any] = {"respondent_id": rid, "pairwise_winner": winner or ""}
            score = ((records.get(rid) or {}).get("critique") or {}).get("score")
            if score is not None:
                fields["critic_score"] = int(score)
            try:
                store.mark(engram, **fields)
            except Exception as exc:  # memory is an extra: the turn stands without it
                log.warning("could not annotate engram %s: %s", engram, exc)
    if winner in ("a", "b", "tie"):
        record_vote(services, state, "judge", winner)
