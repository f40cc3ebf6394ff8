"""The person steers a research run, through the real parts: ChatOllama against the
Ollama-protocol server (its request log), the searxng provider and web_fetch against the
loopback web (its request log), the research graph's SQLite checkpointer (Postgres for the
run steered from another process).

A plan under review runs exactly as approved; a broken edit is refused and the run stays
paused; a clarifying question's answer and a mid-run say reach the next planner request;
says drop, add and stop sub-questions at the next step boundary without running any step
twice; follow-ups come from the ledger, searching only what it lacks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from local2.config import load_settings
from local2.config._schema import ResearchSettings
from local2.errors import InvalidInput, RunNotReady
from local2.service.research._research import Research
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb, research_overrides
from tests.research.helpers import (
    BRIDGE,
    MILL,
    OTTERS,
    QUESTION,
    branches,
    compose_prompt,
    paused,
    plan_requests,
    research,
    run_of,
    steer_at_first_step,
)


def started_twice(payload: dict[str, Any]) -> list[str]:
    started = Counter(
        e["id"]
        for e in payload["event_log"]
        if e["subject"] == "research.step" and e.get("status") == "started"
    )
    return [i for i, n in started.items() if n > 1]


def test_the_run_executes_exactly_the_plan_the_person_approved(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        request = paused(list(run.stream(QUESTION, review=True)))
        assert request["waits_for"] == "plan" and web.hits == []  # nothing searched yet
        assert [(q["id"], q["text"]) for q in request["subquestions"]] == [
            ("q1", BRIDGE),
            ("q2", OTTERS),
        ]
        assert request["subquestions"][0]["steps"] == ["s1", "s2"]
        run_id = request["run_id"]
        assert run.payload(run_id)["awaiting"]["waits_for"] == "plan"
        # Add one (first), keep q1 with its words edited, remove q2.
        edit = {"subquestions": [{"text": MILL}, {"id": "q1", "text": "Kelsby swing bridge vote"}]}
        payload = list(run.input(run_id, {"plan": edit}))[-1][1]
        run.close()
    assert payload["status"] == "done"
    assert sorted(web.searches()) == sorted([MILL, "Kelsby swing bridge vote"])
    served = web.pages_served()
    assert "05_river_survey" not in served and len(served) == len(set(served))
    assert len(plan_requests(fake)) == 1  # the planner was not asked again
    composed = compose_prompt(fake)  # what the model was shown: the approved plan's pages
    assert "tide mill" in composed.lower() and "otter" not in composed.lower()
    order = [(s["id"], s["args"].get("query"), s["status"]) for s in payload["steps"]]
    assert order[0][1] == MILL and order[2][1] == "Kelsby swing bridge vote"  # as reordered
    assert all(status == "done" for _, _, status in order)
    assert started_twice(payload) == []
    subjects = [e["subject"] for e in payload["event_log"]]
    assert subjects.index("research.awaiting_input") < subjects.index("research.input")
    assert [p["origin"] for p in payload["plan"]] == ["model", "person"]
    removed = next(q for q in payload["subquestions"] if q["id"] == "q2")
    assert removed["status"] == "removed"


def test_a_plan_that_breaks_the_rules_is_refused_and_the_run_stays_paused(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE)])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1, max_steps=4)
        run_id = paused(list(run.stream(QUESTION, review=True)))["run_id"]
        cases = [
            ({"subquestions": []}, "no sub-question is left"),
            ({"subquestions": [{"text": "a"}, {"text": "b"}]}, "at most 4 are allowed"),
            ({"subquestions": [{"id": "q9", "text": "x"}]}, "there is no 'q9'"),
            ({"subquestions": [{"txt": "x"}]}, "Field required"),
            ({"subquestions": [{"text": "   "}]}, "a sub-question is empty"),
        ]
        for plan, reason in cases:
            with pytest.raises(InvalidInput, match=reason):
                list(run.input(run_id, {"plan": plan}))
            assert run.payload(run_id)["status"] == "awaiting_input"
        with pytest.raises(InvalidInput, match="waits for its plan, not an answer"):
            list(run.input(run_id, {"answer": "the planet"}))
        assert web.hits == []
        # Straight to the graph, as LangGraph Server resumes: refused there too, and the run
        # pauses again with the reasons in what it waits for.
        config = {"configurable": {"thread_id": run_id}}
        run.graph.invoke(
            Command(resume={"plan": {"subquestions": []}}), config, context=run.context
        )
        again = run.awaiting(run_id)
        assert again is not None and "no sub-question is left" in (again["error"] or "")
        assert web.hits == []
        payload = list(run.input(run_id, {"approve": True}))[-1][1]
        run.close()
    assert payload["status"] == "done" and web.searches() == [BRIDGE]
    refused = [e for e in payload["event_log"] if e.get("refused")]
    assert len(refused) == 1 and "no sub-question" in refused[0]["refused"]


def test_a_clarifying_question_is_asked_and_its_answer_goes_into_the_plan(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    asking = {  # the first plan asks first: its steps are planned again after the answer
        **default_plan("Kelsby bridge"),
        "clarify": {
            "question": "Which Kelsby bridge?",
            "readings": ["the swing bridge", "the rail bridge"],
        },
    }
    with FakeOllama(ResearchBrain(plans=[asking])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        request = paused(list(run.stream("Tell me about the Kelsby bridge", clarify="auto")))
        assert request["waits_for"] == "answer" and web.hits == []
        assert request["clarify"] == {
            "question": "Which Kelsby bridge?",
            "readings": ["the swing bridge", "the rail bridge"],
        }
        assert "clarify" in plan_requests(fake)[0]["format"]["properties"]
        payload = list(run.input(request["run_id"], {"answer": "the swing bridge"}))[-1][1]
        run.close()
    first, second = plan_requests(fake)
    assert "the swing bridge" not in str(first["messages"])
    assert "the person answered: the swing bridge" in second["messages"][-1]["content"]
    assert "clarify" not in second["format"]["properties"]  # asked once
    assert payload["status"] == "done"
    assert payload["clarification"] == {
        "question": "Which Kelsby bridge?",
        "readings": ["the swing bridge", "the rail bridge"],
        "answer": "the swing bridge",
    }
    answered = [e for e in payload["event_log"] if e["subject"] == "research.input"]
    assert answered and answered[0]["answer"] == "the swing bridge"
    assert [p["origin"] for p in payload["plan"]] == ["clarify", "model"]


def test_clarify_never_sends_no_question_to_ask(web: LoopbackWeb, tmp_path: Path) -> None:
    asking = {**default_plan(QUESTION), "clarify": {"question": "?", "readings": ["a", "b"]}}
    with FakeOllama(ResearchBrain(plans=[asking])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(QUESTION)  # the service's default: never (no one may be there)
        run.close()
    assert payload["status"] == "done" and payload["clarification"] is None
    assert "clarify" not in plan_requests(fake)[0]["format"]["properties"]


def test_says_apply_at_the_next_step_boundary_and_reach_the_next_plan(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    web.search_delay_s = 0.5  # the first search is still running when the says arrive
    brain = ResearchBrain(plans=[branches(BRIDGE, OTTERS)], gaps=[["sourdough starter"], []])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=2, max_parallel=1)
        says = [{"text": "focus on safety, skip pricing"}, {"drop": "q2"}, {"add": MILL}]
        payload = steer_at_first_step(run, run.stream(QUESTION), says)
        run.close()
    assert payload["status"] == "done"
    assert OTTERS not in web.searches()  # dropped before it ran
    assert Counter(web.searches()) == Counter([BRIDGE, MILL, "sourdough starter"])
    assert started_twice(payload) == []
    second = plan_requests(fake)[1]["messages"][-1]["content"]  # round 2's plan
    assert "The person says: focus on safety, skip pricing" in second
    assert "leave them out: otters Lune survey" in second
    steered = [e for e in payload["event_log"] if e["subject"] == "research.steer"]
    assert [e["kind"] for e in steered] == ["text", "drop", "add"]
    assert "q2 dropped by the person: 2 pending step(s)" in steered[1]["effect"]
    assert steered[2]["effect"].startswith("added q3")
    assert payload["notes"] == ["focus on safety, skip pricing"]
    statuses = {q["id"]: q["status"] for q in payload["subquestions"]}
    assert statuses["q2"] == "dropped" and statuses["q3"] == "open"
    assert "The person says: focus on safety" in compose_prompt(fake)


def test_stopping_a_branch_keeps_what_it_read_and_stopping_the_run_writes_the_report(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    web.search_delay_s = 0.5
    brain = ResearchBrain(
        plans=[branches(BRIDGE, OTTERS, MILL)],
        gaps=[["sourdough starter"]],
        missing=[["sourdough starter"]],
    )
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=3, max_parallel=1)
        items = run.stream(QUESTION)
        payload: dict[str, Any] = {}
        items_seen: list[tuple[str, Any]] = []
        for kind, data in items:
            items_seen.append((kind, data))
            if kind == "event" and data["subject"] == "research.step":
                if data["id"] == "s1" and data["status"] == "started":
                    run.steer(run_of(run), {"stop": "q1"})  # its read is left out
                if data["id"] == "s3" and data["status"] == "started":
                    run.steer(run_of(run), {"stop": "run"})  # q3 and round 2 never happen
            if kind == "final":
                payload = data
        with pytest.raises(RunNotReady, match="a say reaches only a running run"):
            run.steer(payload["run_id"], {"text": "too late"})
        thread = {"configurable": {"thread_id": payload["run_id"]}}
        ledger = run.graph.get_state(thread).values["ledger"]
        searched, read = list(web.searches()), list(web.pages_served())
        asked = list(run.followup(payload["run_id"], "What temperature suits a starter?"))
        run.close()
    steps = {s["id"]: s for s in payload["steps"]}
    assert steps["s1"]["status"] == "done" and steps["s2"]["status"] == "skipped"
    assert steps["s2"]["error"] == "stopped by the person"
    assert steps["s3"]["status"] == "done"  # it was running: it finished
    assert {steps[i]["status"] for i in ("s4", "s5", "s6")} == {"skipped"}
    # Each step left out is said as it is left out, as each step that runs is: the live
    # checklist shows it skipped, not pending.
    said = {
        d["id"]: d
        for k, d in items_seen
        if k == "event" and d["subject"] == "research.step" and d["status"] == "skipped"
    }
    assert {"s2", "s4", "s5", "s6"} <= set(said)
    assert said["s2"]["reason"] == "stopped by the person"
    assert said["s4"]["reason"] == "the person stopped the run"
    assert searched == [BRIDGE, OTTERS] and read == []
    assert any(s["step"] == "s1" for s in ledger)  # what q1 found is kept
    assert payload["rounds"][-1]["stop"] == "the person stopped the run"
    assert "ResearchGaps" not in str(fake.chat_requests)  # no round 2 was asked for
    assert payload["status"] == "stopped" and payload["report"]
    assert payload["stopped"] == "the person stopped the run"
    # Stopping the run does not stop its follow-ups: what the ledger lacks is searched.
    assert asked[-1][1]["status"] == "stopped"  # and the run still says it was stopped
    answered = next(d for k, d in asked if k == "followup")
    assert (
        answered["searched"] == ["sourdough starter"] and web.searches()[-1] == "sourdough starter"
    )


def test_a_say_reaches_a_run_running_in_another_process(
    web: LoopbackWeb, tmp_path: Path, postgres_url: str
) -> None:
    """Two services on one Postgres, as two ``local2 serve`` processes: the say goes to the
    one that does not run the run, and the one that runs it applies it."""

    def on_postgres(name: str) -> Research:
        overrides = research_overrides(web, tmp_path / name)
        overrides["system"].update(
            ollama_host=fake.url, checkpointer="postgres", postgres_url=postgres_url
        )
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1, max_parallel=1)
        return Research(load_settings(overrides=overrides), backend="ollama")

    web.search_delay_s = 0.5
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        running, other = on_postgres("a"), on_postgres("b")
        payload: dict[str, Any] = {}
        for kind, data in running.stream(QUESTION, run_id="far-1"):
            step = kind == "event" and data["subject"] == "research.step"
            if step and data["id"] == "s1" and data["status"] == "started":
                assert other.payload("far-1")["status"] == "running"
                other.steer("far-1", {"drop": OTTERS})  # by its text
            if kind == "final":
                payload = data
        running.close()
        other.close()
    assert OTTERS not in web.searches()
    steered = [e for e in payload["event_log"] if e["subject"] == "research.steer"]
    assert len(steered) == 1 and steered[0]["effect"].startswith("q2 dropped")


def test_follow_ups_come_from_the_ledger_and_search_only_what_it_lacks(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    brain = ResearchBrain(extra=["Kelsby also has a castle [42]."])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        done = run.run(QUESTION)
        run_id = done["run_id"]
        read = set(web.pages_served())
        hits = len(web.hits)
        items = list(
            run.followup(run_id, "Why did the residents of Kelsby vote to keep the bridge?")
        )
        first = next(d for k, d in items if k == "followup")
        assert len(web.hits) == hits  # 0 new searches, 0 new fetches
        assert first["from_ledger"] and first["searched"] == [] and first["read"] == []
        assert first["sources"] and first["citations"] >= 1
        assert all(s["n"] <= done["ledger_size"] for s in first["sources"])
        # (the scripted writer also cuts a snippet's "1.7" at "1.": refused, rightly)
        assert "Kelsby also has a castle [42]." in [u["sentence"] for u in first["unsupported"]]

        question = "How many otters did the river Lune survey count?"
        second = next(d for k, d in run.followup(run_id, question) if k == "followup")
        new = web.hits[hits:]
        assert [h.query for h in new if h.path == "/search"] == [question]  # only what it lacked
        fetched = [h.path.removeprefix("/pages/") for h in new if h.path != "/search"]
        assert fetched and not set(fetched) & read
        assert len(fetched) <= ResearchSettings().fetch_count  # the round's budget of reads
        assert not second["from_ledger"] and second["searched"] == [question]
        assert {u.rsplit("/", 1)[-1] for u in second["read"]} == set(fetched)
        payload = run.payload(run_id)
        run.close()
    assert [f["n"] for f in payload["followups"]] == [1, 2]
    assert payload["report"] == done["report"]  # the report stays the run's own
    events = [e for e in payload["event_log"] if e["subject"] == "research.followup"]
    assert [e["missing"] for e in events] == [[], [question]]
    marked = [s for s in payload["steps"] if s.get("followup") == 2]
    assert [s["tool"] for s in marked] == ["web_search", "web_fetch", "compose"]
    assert (
        sum(
            1
            for r in fake.chat_requests
            if (r.get("format") or {}).get("title") == "ResearchFollowup"
        )
        == 2
    )
