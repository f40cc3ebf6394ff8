"""The turn after its answer: ``publish`` (the payload and the turn log's record), the critic's
grade (``critique``: :func:`grade_turn`; owed when the person's next question comes first),
``ingest`` (the turn remembered), and a second attempt at a low-graded answer (``retry``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import (
    Critique,
    EventEntry,
    Pairwise,
    PairwiseVerdict,
    PendingGrade,
    Respondent,
    RespondentAnswer,
    Retry,
    RetryAttempts,
    ToolCall,
    ToolCallRecord,
    TurnPayload,
    TurnRecord,
)
from local2.errors import GaveWay
from local2.graph._turn import (
    RESPONDENT_IDS,
    Dialog,
    RespondentId,
    Services,
    TurnContext,
    TurnState,
    TurnUpdate,
    attached_evidence,
    event,
    push,
    remember_turn,
)
from local2.models import Cancellation

# --- payload ----------------------------------------------------------------------------
# The turn payload (``response.generation``): one dict that says everything about a turn.
#
# A compare turn's payload describes the answer shown (respondent ``a`` until the person
# prefers ``b``) at the top level, as every payload does, plus ``respondents`` (each one's
# answer, thinking, tool calls, memory hits, grade) and ``pairwise`` (the judge's verdict, the
# person's preference, which answer continues the history). Every event of it carries
# ``respondent_id``: ``a``, ``b``, or null for the turn's shared events (the question, the
# judge's comparison). A retry's payload has ``retry`` (both attempts' grades, which is shown).


def _tool_call(call: Any) -> ToolCall:
    out = cast(
        ToolCall, {k: call.get(k) for k in ("tool", "args", "result", "error", "duration_s")}
    )
    for optional in ("provider", "fix", "sources", "notices"):
        if call.get(optional):
            out[optional] = call[optional]
    return out


def turn_payload(state: TurnState | Mapping[str, Any]) -> TurnPayload:
    event_log = list(state.get("event_log") or [])
    payload: TurnPayload = {
        "session_id": state.get("session_id"),
        "query_id": state.get("query_id"),
        "query": state.get("query"),
        "answer": state.get("answer") or "",
        "thinking": "\n\n".join(t for t in state.get("thinking") or [] if t),
        "tool_calls": [_tool_call(call) for call in state.get("tool_calls") or []],
        "memory_hits": list(state.get("memory_hits") or []),
        "memory_saved": list(state.get("memory_saved") or []),
        "document_hits": list(state.get("document_hits") or []),
        "model": state.get("model"),
        "backend": state.get("backend"),
        "events": [e["subject"] for e in event_log],
        "event_log": event_log,
    }
    if state.get("critique") is not None:
        payload["critique"] = state.get("critique")
    elif state.get("query_id") in (state.get("pending_grades") or {}):
        payload["critique_pending"] = True  # it gave way to the next question: graded later
    if error := state.get("error"):
        payload["error"] = str(error)
    parts = compare_parts(state)
    if "retry_offered" in parts:
        payload["retry_offered"] = parts["retry_offered"]
    if "respondents" in parts:
        payload["respondents"] = parts["respondents"]
    if "pairwise" in parts:
        payload["pairwise"] = parts["pairwise"]
    if "event_log" in parts:
        payload["event_log"] = parts["event_log"]
    if "retry" in parts:
        payload["retry"] = parts["retry"]
    return payload


def _tool_calls(calls: Sequence[ToolCallRecord]) -> list[ToolCall]:
    """A respondent's calls as its payload shows them (no provider or fix beside them)."""
    return [
        {
            "tool": call["tool"],
            "args": call["args"],
            "result": call["result"],
            "error": call["error"],
            "duration_s": call["duration_s"],
        }
        for call in calls
    ]


def pairwise_verdict(pairwise: Pairwise | Mapping[str, Any]) -> PairwiseVerdict:
    """A compare turn's ``pairwise`` as its payload gives it (the state keeps the judge's
    verdict and the person's as text)."""
    judge = pairwise.get("judge") or {}
    labels = {rid: s.get("label") for rid, s in (pairwise.get("specs") or {}).items()}
    verdict: PairwiseVerdict = {
        "winner": cast("Literal['a', 'b', 'tie'] | None", pairwise.get("winner")),
        "scores": judge.get("scores"),
        "verdicts": judge.get("verdicts"),
        "feedback": judge.get("feedback"),
        "reason": judge.get("reason"),
        "preferred": cast("Literal['a', 'b', 'tie'] | None", pairwise.get("preferred")),
        "shown": cast("Literal['a', 'b']", pairwise.get("shown") or "a"),
        "models": labels,
    }
    return verdict


def turn_record(payload: TurnPayload) -> TurnRecord:
    """The payload as the turn log keeps it: its query and answer are columns already."""
    kept = {k: v for k, v in payload.items() if k not in ("query", "answer")}
    return cast(TurnRecord, kept)  # TurnRecord: TurnPayload's other fields


class CompareParts(TypedDict, total=False):
    """What a compare turn or a retry adds to its payload."""

    retry_offered: bool
    respondents: dict[str, RespondentAnswer]
    pairwise: PairwiseVerdict
    event_log: list[EventEntry]
    retry: RetryAttempts


def _respondent(
    rid: RespondentId, record: Respondent, label: str | None, shown: str
) -> RespondentAnswer:
    """One respondent's answer as the payload shows it (None for what it never got to)."""
    return {
        "respondent_id": rid,
        "label": label,
        "model": record.get("model"),
        "backend": record.get("backend"),
        "temperature": record.get("temperature"),
        "answer": record.get("answer"),
        "memory_hits": record.get("memory_hits"),
        "critique": record.get("critique"),
        "error": record.get("error"),
        "thinking": "\n\n".join(record.get("thinking") or []),
        "tool_calls": _tool_calls(record.get("tool_calls") or []),
        "continues_history": rid == shown,
    }


def compare_parts(state: TurnState | Mapping[str, Any]) -> CompareParts:
    """``respondents``/``pairwise``/``retry``/``retry_offered`` for this turn, if any."""
    parts: CompareParts = {}
    query_id = state.get("query_id")
    log: list[EventEntry] = list(state.get("event_log") or [])
    if any(e.get("subject") == events.RETRY_OFFERED for e in log):
        parts["retry_offered"] = True
    pairwise: Pairwise = state.get("pairwise") or {}
    if query_id and pairwise.get("query_id") == query_id:
        labels = {rid: s.get("label") for rid, s in (pairwise.get("specs") or {}).items()}
        records: dict[str, Respondent] = state.get("respondents") or {}
        shown = pairwise.get("shown") or "a"
        parts["respondents"] = {
            rid: _respondent(rid, records.get(rid) or {}, labels.get(rid), shown)
            for rid in RESPONDENT_IDS
        }
        parts["pairwise"] = pairwise_verdict(pairwise)
        # every event of a compare turn says whose it is: null for the turn's own
        parts["event_log"] = [{"respondent_id": None, **e} for e in log]
    retry: Retry = state.get("retry") or {}
    if query_id and retry.get("query_id") == query_id:
        first, second = retry.get("first"), retry.get("second")
        parts["retry"] = {
            "of": retry.get("of"),
            "first": {
                "answer": first.get("answer") if first else None,
                "score": first.get("score") if first else None,
                "feedback": first.get("feedback") if first else None,
                "model": first.get("model") if first else None,
            },
            "second": {"score": second.get("score") if second else None},
            "shown": retry.get("shown", 2),
        }
    return parts


# --- owed -------------------------------------------------------------------------------
# A grade owed: the critic gave way to the person's next question.
#
# When the person asks the session's next question while the critic still grades the last
# answer (``critique``/``critique_pair`` with the run's ``give_way`` set), the critic gives way:
# its request is cancelled, and the node only records that the grade is owed (:func:`defer`): a
# ``pending_grades`` entry in the session's state (the checkpoint its critique started from,
# the turn it grades) and ``critique.deferred``. The turn then ends at once; ``settle_pair``
# counts no judge vote yet (and names its own checkpoint as the one to grade from: the engrams
# are stored by then) and ``settle_retry`` keeps the attempt the person saw. The grade is given
# later (:mod:`local2.graph._graph`).

ROOT = ""  # the chat graph's own checkpoint namespace (not a subgraph's)


def started_from(config: RunnableConfig) -> str | None:
    """The checkpoint a node's task runs from (LangGraph names it in the task's config)."""
    return ((config.get("configurable") or {}).get("checkpoint_map") or {}).get(ROOT)


def defer(state: TurnState, config: RunnableConfig, *, pair: bool) -> TurnUpdate:
    """The update of a critique that gave way: the grade is owed, from this checkpoint (a
    pair's, from the one ``settle_pair`` runs from: its engrams are stored by then)."""
    query_id = state["query_id"]
    started = started_from(config)
    records = state.get("respondents") or {}
    shown = (state.get("pairwise") or {}).get("shown") or "a"
    turn_id = (records.get(shown) or {}).get("turn_id") if pair else state.get("history_head")
    owed: PendingGrade = {"checkpoint_id": started, "turn_id": turn_id, "pair": pair}
    deferred = event(
        state,
        events.CRITIQUE_DEFERRED,
        query_id=query_id,
        session_id=state.get("session_id"),
        **({"respondent_id": None} if pair else {}),
    )
    return {"pending_grades": {query_id: owed}, "event_log": [deferred]}


# --- grading ----------------------------------------------------------------------------
# Grading an answered turn: the chat graph's ``critique`` node and research's both grade
# here, flag ungrounded citations and annotate the engram.
#
# Runs after ``publish`` beside ``ingest``. It can only add information: a disabled critic
# emits nothing, and a judge that fails or times out yields ``score: None``, never an error.
# Two halves: :func:`judge_turn` asks the judge (seconds, and it may give way to the person's
# next question, :class:`~local2.errors.GaveWay`), :func:`record_grade` keeps the grade (the
# event, the engram's score, the turn log's note: milliseconds); a grade given after the next
# question (:mod:`local2.graph._graph`) is the same two halves, apart.

log = logging.getLogger(__name__)

# A critic that may give way asks the judge this long after the answer went out: a question
# already on its way (a script's, a quick follow-up) comes first, and no grading request is
# started only to be cancelled milliseconds later.
ASK_AFTER_S = 0.05


def memory_lookup(
    state: TurnState | Mapping[str, Any], services: Services
) -> Callable[[str], bool] | None:
    """Whether an engram id exists: recalled this turn, or found in the turn's owner's
    memory (someone else's engram is as unknown as an invented id)."""
    recalled = {hit["id"] for hit in state.get("memory_hits") or []}
    get = getattr(services.memory_for(state.get("owner")), "get", None)
    if get is None:
        return recalled.__contains__ if recalled else None
    return lambda memory_id: memory_id in recalled or get(memory_id) is not None


def told(state: TurnState | Mapping[str, Any]) -> str:
    """What the model was told this turn besides tool results: memories recalled, and the
    words of the turn's messages (a figure from there is not an invention). Tool messages
    are left out: their results are the evidence, read already."""
    memories = [str(h.get("content") or "") for h in state.get("memory_hits") or []]
    said = [
        m.content
        for m in state.get("messages") or []
        if m.type != "tool" and isinstance(m.content, str)
    ]
    return "\n".join([*memories, *said])


def grade_turn(
    state: TurnState, services: Services, give_way: Cancellation | None = None
) -> TurnUpdate:
    """Grade the turn and keep the grade; :class:`~local2.errors.GaveWay` when ``give_way``
    is set before the judge has answered (nothing kept: grade it later)."""
    if services.critic is None:
        return {}
    let_others_first(give_way)
    return record_grade(state, services, judge_turn(state, services, give_way))


def let_others_first(give_way: Cancellation | None) -> None:
    """Before asking the judge, wait :data:`ASK_AFTER_S` for a question already on its way:
    :class:`~local2.errors.GaveWay` if one comes."""
    if give_way is not None and give_way.wait(ASK_AFTER_S):
        give_way.check("the critic")


def judge_turn(
    state: TurnState | Mapping[str, Any], services: Services, give_way: Cancellation | None = None
) -> Critique:
    """The judge's critique of the turn's answer (the critic must be on)."""
    assert services.critic is not None
    answer = state.get("answer") or ""
    if not answer.strip():
        return {"score": None, "feedback": "no answer to grade", "flags": []}
    try:
        return services.critic.grade(
            state["query"],
            answer,
            # the attached documents' passages were read too (graph/_turn.py)
            [*(state.get("tool_calls") or []), *attached_evidence(state)],
            memory_lookup(state, services),
            listing_tools=services.listing_tools(),
            context=told(state),
            cancel=give_way,
        )
    except Exception as exc:  # Critic.grade should not raise; the turn must not break
        return {"score": None, "feedback": f"critic failed: {exc}"[:300], "flags": []}


def record_grade(
    state: TurnState | Mapping[str, Any],
    services: Services,
    result: Critique,
    *,
    late: bool = False,
) -> TurnUpdate:
    """Keep ``result`` as the turn's grade: ``critique.result`` (``late``: given after the
    session's next question), the engram's critic score, the turn log's note; the state
    update, with ``critique.retry_offered`` for a low grade of an answer still offered."""
    query_id = state.get("query_id")
    said: dict[str, bool] = {"late": True} if late else {}
    entry = event(
        state,
        events.CRITIQUE_RESULT,
        score=result.get("score"),
        feedback=result.get("feedback", ""),
        flags=list(result.get("flags", [])),
        query_id=query_id,
        session_id=state.get("session_id"),
        **said,
    )
    store = services.memory_for(state.get("owner"))
    if store is not None and result.get("score") is not None and query_id:
        try:
            store.annotate(query_id, critic_score=result["score"])
        except Exception:
            log.warning("could not annotate engram of %s with the critic score", query_id)
    if state.get("history_head"):  # so a resumed session shows each turn's grade
        services.turn_log.note(str(state["history_head"]), "critique", dict(result))
    return {"critique": result, "event_log": [entry, *offer(state, services, result)]}


def offer(state: TurnState | Mapping[str, Any], services: Services, result: Critique) -> list[Any]:
    """``critique.retry_offered`` when the grade is at or below the threshold (not for a
    turn that is itself a retry: two attempts are the most offered)."""
    threshold = services.settings.critic.retry_below
    score = result.get("score")
    retry = state.get("retry") or {}
    if score is None or score > threshold or retry.get("query_id") == state.get("query_id"):
        return []
    return [
        event(
            state,
            events.RETRY_OFFERED,
            query_id=state.get("query_id"),
            session_id=state.get("session_id"),
            score=score,
            threshold=threshold,
        )
    ]


# --- publish ----------------------------------------------------------------------------
# ``publish``: record the clean turn in history and announce the answer.

PREVIEW_CHARS = 160


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def publish(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
    answer = state.get("answer") or ""
    generation = event(
        state,
        events.RESPONSE_GENERATION,
        session_id=state["session_id"],
        query_id=state["query_id"],
        answer_chars=len(answer),
        thinking_chars=sum(len(t) for t in state.get("thinking") or []),
        tool_calls=len(state.get("tool_calls") or []),
    )
    dialog_payload: Dialog = {
        "session_id": state["session_id"],
        "query": state["query"],
        "answer": answer,
    }
    # The stream carries the whole answer; the checkpointed log keeps a preview, since the
    # answer itself is already stored once in `answer` and in the turn log.
    dialog = event(state, events.ANSWER_DIALOG, **{**dialog_payload, "answer": preview(answer)})
    push({"dialog": dialog_payload})
    payload = turn_payload(
        {**state, "event_log": [*state.get("event_log", []), generation, dialog]}
    )
    record = turn_record(payload)
    head = services.turn_log.append(
        parent_id=state.get("history_head"),
        session_id=state["session_id"] or "",
        query_id=state["query_id"],
        user=state["query"],
        assistant=answer,
        record=record,
    )
    push({"payload": payload})
    return {
        "history_head": head,
        "turn_count": state.get("turn_count", 0) + 1,
        "event_log": [generation, dialog],
    }


# --- critique ---------------------------------------------------------------------------
# ``critique``: grade the published answer (:mod:`local2.graph._after`), beside ``ingest``;
# or give way to the person's next question and owe the grade (:mod:`local2.graph._after`).


def critique(state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig) -> TurnUpdate:
    services = runtime.context.services
    if services.critic is None:
        return {}
    try:
        return grade_turn(state, services, runtime.context.give_way)
    except GaveWay:  # the person's next question came first: graded later
        return defer(state, config, pair=False)


# --- ingest -----------------------------------------------------------------------------
# ``ingest``: remember the answered turn (:mod:`local2.graph._turn`), beside ``critique``.


def ingest(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    update = remember_turn(state, runtime.context.services, runtime.context.give_way)
    if runtime.context.memory_written is not None:
        runtime.context.memory_written()
    return update


# --- retry ------------------------------------------------------------------------------
# The critic in the loop: a second attempt at a low-graded answer (docs/architecture.md, "A turn's
# path").
#
# When the critic grades an answer at or below ``critic.retry_below``, ``critique`` emits
# ``critique.retry_offered``. A retry is a turn whose context carries
# ``retry`` (:class:`~local2.contracts._turn.FirstAttempt`: its turn, answer and critique):
#
# ```
# receive -> retry_context -> generate ... publish -> critique -> settle_retry
# ```
# - ``retry_context`` puts the turn back on the history the first attempt answered from, and
#   shows the model its first answer and the critique, asking for a better one;
# - ``publish`` then appends the second attempt beside the first in the turn log (both are
#   kept), and the critic grades it;
# - ``settle_retry`` keeps the higher-graded attempt as the one the session continues from
#   (the second on a tie). The person can switch (:meth:`local2.service.chat.Ratings.show`).
#   A grade that gave way to the person's next question keeps the second attempt, the one
#   they saw, until it is given (:mod:`local2.graph._graph` settles it then, if the
#   session has not moved on).

RETRY_NOTE = (
    "A reviewer graded your answer above {score}/5 for the question before it. Their "
    "feedback:\n{feedback}\n\nAnswer the question again, better: fix what the feedback "
    "points out (use the tools if facts need checking). Reply with the new answer only; do "
    "not mention the review."
)


def retry_context(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    first = runtime.context.retry
    if first is None:  # a replay of a retry's first step: nothing to try again
        return {}
    query_id = state["query_id"]
    note = RETRY_NOTE.format(
        score=first.get("score"), feedback=(first.get("feedback") or "(none)").strip()
    )
    started = event(
        state,
        events.RETRY_STARTED,
        query_id=query_id,
        of=first.get("query_id"),
        score=first.get("score"),
    )
    return {
        "messages": [
            AIMessage(first.get("answer") or "", id=f"retry-first-{query_id}"),
            HumanMessage(note, id=f"retry-note-{query_id}"),
        ],
        # The history the first attempt answered from: publish appends beside it.
        "history_head": first.get("parent_id"),
        "turn_count": max(0, state.get("turn_count", 0) - 1),
        "retry": {
            "query_id": query_id,
            "of": first.get("query_id"),
            "first": {
                "turn_id": first.get("turn_id"),
                "answer": first.get("answer"),
                "score": first.get("score"),
                "feedback": first.get("feedback"),
                "model": first.get("model"),
            },
            "shown": 2,
        },
        "event_log": [started],
    }


def _rank(score: int | None) -> int:
    return -1 if score is None else int(score)


def settle_retry(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    """Keep the higher-graded attempt in the history (the second one on a tie)."""
    return settle(state)


def settle(state: TurnState | Mapping[str, Any]) -> TurnUpdate:
    """Which attempt the history continues from, by their grades; the second while its grade
    is owed (it gave way to the next question)."""
    retry: Retry = {**(state.get("retry") or {})}
    first = retry.get("first")
    first_score, first_turn = (first.get("score"), first.get("turn_id")) if first else (None, None)
    second_score = (state.get("critique") or {}).get("score")
    owed = state.get("query_id") in (state.get("pending_grades") or {})
    retry["second"] = {"turn_id": state.get("history_head"), "score": second_score}
    if owed or _rank(first_score) <= _rank(second_score) or not first_turn:
        return {"retry": {**retry, "shown": 2}}
    switched = event(
        state,
        events.HISTORY_SWITCHED,
        query_id=state.get("query_id"),
        shown="attempt 1",
        turn_id=first_turn,
        by="critic",
        scores={"1": first_score, "2": second_score},
    )
    return {
        "retry": {**retry, "shown": 1},
        "history_head": first_turn,
        "event_log": [switched],
    }
