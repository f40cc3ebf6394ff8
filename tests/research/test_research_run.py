"""Research runs end to end in-process: the real ChatOllama against the Ollama-protocol server,
the real searxng provider and web_fetch against a loopback web of captured pages, the real
SQLite checkpointer (and real Chroma where memory is on)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.errors import RunBusy
from local2.models._scripted import ScriptedChatModel, reply
from local2.research._plan import call_key
from local2.research._planner import keywords
from local2.research._report import HOP_READ
from local2.service.agent import Agent
from local2.service.research._research import Research
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb, research_overrides
from tests.research.helpers import QUESTION, research


def subjects(payload: dict[str, Any]) -> list[str]:
    return payload["events"]


def test_invented_citation_number_and_url_do_not_survive(web: LoopbackWeb, tmp_path: Path) -> None:
    brain = ResearchBrain(
        extra=[
            "The bridge carries 48,000 cars a day [1].",
            "Kelsby also has a castle [42].",
            "Read more at https://invented.example.com/bridge-story.",
        ]
    )
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, memory=True, max_rounds=1)
        payload = run.run(QUESTION)
        run.close()
    report = payload["report"]
    body = report.split("## References")[0]
    assert "48,000" not in body and "[42]" not in body and "invented.example" not in body
    reasons = " | ".join(u["reason"] for u in payload["unsupported"])
    assert "'48000' not in the cited source [1]" in reasons
    assert "cites [42]" in reasons and "links to a page" in reasons
    # The references are the pages read (and cited results), all from the ledger.
    read = {web.page_url(name) for name in web.pages_served()}
    assert read and read <= {s["url"] for s in payload["sources"]}
    assert all(s["url"].startswith(web.url) for s in payload["sources"])
    assert "Residents of Kelsby voted on Tuesday" in body and "since 1894" in body
    for subject in ("research.plan", "research.step", "research.round", "research.report"):
        assert subject in subjects(payload)
    assert "critique.result" in subjects(payload) and "memory.ingested" in subjects(payload)
    assert payload["critique"]["score"] == 4
    # Every structured request carried its JSON schema; the brain's replies kept to it.
    formats = [r.get("format") for r in fake.chat_requests if r.get("format")]
    assert [f["title"] for f in formats] == ["ResearchPlan"]
    assert fake.format_violations == []


def test_a_search_failing_twice_leads_to_a_replan_and_a_report(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    web.search_failures = [503, 503]  # the first search and its one retry
    brain = ResearchBrain(replan_query="Kelsby swing bridge vote")
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(QUESTION)
        run.close()
    assert web.searches() == [QUESTION, QUESTION, "Kelsby swing bridge vote"]
    replan = next(e for e in payload["event_log"] if e["subject"] == "research.replan")
    assert "search failed: 503" in replan["reason"]
    assert call_key("web_search", {"query": QUESTION}) in replan["forbidden"]
    failed = [s for s in payload["steps"] if s["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["calls"][0]["attempts"] == 2
    assert payload["status"] == "done" and payload["sources"]
    assert "Kelsby" in payload["report"]


def test_a_replan_that_breaks_the_rules_gets_the_fallback(web: LoopbackWeb, tmp_path: Path) -> None:
    top = [p.name for p in web.rank(QUESTION)[:2]]
    web.page_status = dict.fromkeys(top, 404)  # the two best results cannot be read
    brain = ResearchBrain(plans=[default_plan(QUESTION), "not json", "still not json"])
    with FakeOllama(brain) as fake:  # a round reads two pages: both fail
        run = research(fake, web, tmp_path, max_rounds=1, fetch_count=2)
        payload = run.run(QUESTION)
        run.close()
    assert [p["origin"] for p in payload["plan"]] == ["model", "fallback"]
    assert brain.requests["plan"] == 3  # the plan, the replan and its one repair
    served = web.pages_served()  # read side by side: in any order
    assert set(served[:2]) == set(top) and len(served) == 4  # then the next two results
    assert web.searches() == [QUESTION]  # and did not search again
    assert payload["status"] == "done" and len(payload["sources"]) >= 2


def test_a_failed_search_is_reworded_when_the_replan_breaks_the_rules(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The first search fails twice (500) and the replan is unusable: the fallback keeps
    researching, searching the question's keywords, and the report has sources."""
    web.search_failures = [500, 500]
    brain = ResearchBrain(plans=[default_plan(QUESTION), "not json", "still not json"])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(QUESTION)
        run.close()
    reworded = keywords(QUESTION)
    assert reworded == "Kelsby keep harbour swing bridge"
    assert web.searches() == [QUESTION, QUESTION, reworded]
    assert [p["origin"] for p in payload["plan"]] == ["model", "fallback"]
    assert payload["status"] == "done" and payload["sources"]
    assert web.pages_served() and "No sources" not in payload["report"]


def test_when_every_search_fails_the_last_fallback_calls_no_tools_and_says_why(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    web.search_failures = [404] * 20
    brain = ResearchBrain(plans=[default_plan(QUESTION), "not json", "still not json"])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1, max_replans=2)
        payload = run.run(QUESTION)
        run.close()
    # The replan broke the rules: its fallback searched the question's keywords, which
    # failed too; the next replan's search failed as well, and after max_replans what is
    # left calls no tools.
    origins = [p["origin"] for p in payload["plan"]]
    assert origins == ["model", "fallback", "model", "no-tools"]
    whys = [p.get("why") for p in payload["plan"]]  # a rule's plan says why it was used
    assert whys[0] is None and whys[2] is None
    # in the person's words, one sentence; the planner's own words kept for the log
    assert whys[1] == (
        "The model's plan could not be used (its reply was not a plan in the form asked for), "
        "so a standard plan was used."
    )
    assert "not valid JSON" in payload["plan"][1].get("why_detail", "")
    assert "JSON" not in whys[1] and "args." not in str(whys)
    assert whys[3] == (
        "The run had replanned 2 times, the most it may (research.max_replans), so it goes "
        "on to the report."
    )
    overview = f"{QUESTION} overview"  # the test brain's replan
    assert web.searches() == [QUESTION, keywords(QUESTION), overview]  # 404: no retry
    # No source, no report: the run ends no_sources, says what it tried and what to do,
    # and no model was asked to write from nothing.
    assert payload["status"] == "no_sources" and payload["sources"] == []
    assert "compose" not in brain.requests
    found = payload["no_sources"]
    assert found is not None and found["cause"] == "failed"
    assert f'searched the web for "{QUESTION}": search failed: 404' in found["tried"]
    report = payload["report"]
    assert report.startswith(f"# {QUESTION}")
    assert "No report: no source could be gathered" in report and "search failed: 404" in report
    assert found["next_step"] in report and "`local2 doctor` checks the search" in report
    assert "No statement survived verification" not in report


def test_the_plan_record_says_what_happened_to_each_attempt(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    plan = default_plan(QUESTION)
    plan["steps"][0]["description"] = "Search the web for the bridge " + "and its history " * 8
    brain = ResearchBrain(plans=[plan])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(QUESTION)
        run.close()
    (attempt,) = payload["plan"][0]["attempts"]
    # Accepted by the plan's rules, though a description broke the schema's length bound.
    assert attempt["accepted"] and attempt["errors"] == []
    assert attempt["schema_valid"] is False
    assert any("description" in e for e in attempt["schema_errors"])


def test_a_broken_plan_is_repaired_once_and_the_schema_was_sent(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    good = default_plan(QUESTION)
    brain = ResearchBrain(plans=['{"goal": "x", "steps": [', good])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(QUESTION)
        run.close()
    assert payload["plan"][0]["origin"] == "repaired"
    assert [a["schema_valid"] for a in payload["plan"][0]["attempts"]] == [False, True]
    plan_requests = [r for r in fake.chat_requests if r.get("format")]
    assert len(plan_requests) == 2 and plan_requests[0]["format"]["title"] == "ResearchPlan"
    assert fake.format_violations and "not JSON" in fake.format_violations[0]
    assert "That reply cannot be used" in plan_requests[1]["messages"][-1]["content"]


def test_independent_steps_run_side_by_side(web: LoopbackWeb, tmp_path: Path) -> None:
    web.search_delay_s = 0.6
    plan = {
        "goal": "two searches",
        "steps": [
            {
                "id": "a",
                "description": "",
                "tool": "web_search",
                "args": {"query": "otters Lune"},
                "requires": [],
            },
            {
                "id": "b",
                "description": "",
                "tool": "web_search",
                "args": {"query": "earthworms no-till"},
                "requires": [],
            },
            {"id": "c", "description": "", "tool": "compose", "args": {}, "requires": ["a", "b"]},
        ],
    }
    with FakeOllama(ResearchBrain(plans=[plan])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run("What do otters and earthworms have in common?")
        run.close()
    log = [  # the searches' (compose starts and ends after them)
        e
        for e in payload["event_log"]
        if e["subject"] == "research.step" and e.get("tool") != "compose"
    ]
    started = [e["t"] for e in log if e["status"] == "started"]
    ended = [e["t"] for e in log if e["status"] == "done"]
    assert len(started) == 2 and max(started) < min(ended)  # both began before either ended
    assert {s["id"] for s in payload["steps"] if s["status"] == "done"} == {"s1", "s2", "s3"}


def test_rounds_follow_the_gaps_then_the_rules_hop_once(web: LoopbackWeb, tmp_path: Path) -> None:
    brain = ResearchBrain(gaps=[["otters river Lune survey"], []])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=3)
        payload = run.run(QUESTION)
        run.close()
    rounds = payload["rounds"]
    assert rounds[0]["gaps"] == ["otters river Lune survey"] and rounds[0]["origin"] == "model"
    # The model names none after round 2; the sources name someone no search looked up
    # (the engineer), so the rule searches that once, and the run composes.
    assert rounds[1]["origin"] == "hop" and rounds[1]["gaps"]
    assert rounds[2]["gaps"] == [] and rounds[2]["stop"] == HOP_READ
    assert [(p["round"], p["origin"]) for p in payload["plan"]] == [
        (1, "model"),
        (2, "model"),
        (3, "hop"),
    ]
    assert brain.requests["gaps"] == 2  # not asked again after the hop
    assert "otters river Lune survey" in web.searches()
    assert set(rounds[1]["gaps"]) <= set(web.searches())
    assert any("Lune" in s["title"] for s in payload["sources"])


def test_round_and_source_budgets_hold(web: LoopbackWeb, tmp_path: Path) -> None:
    brain = ResearchBrain(gaps=[["otters river Lune survey"]] * 5)
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1, max_sources=3)
        payload = run.run(QUESTION)
        run.close()
    assert "gaps" not in brain.requests  # one round allowed: no follow-up asked
    assert payload["rounds"][0]["stop"].startswith(("round limit", "source budget"))
    assert len([s for s in payload["sources"] if s["kind"] == "page"]) <= 3  # pages read


def test_a_stopped_run_resumes_without_repeating_finished_steps(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        items = run.stream(QUESTION)
        run_id = ""
        for kind, data in items:
            if kind == "run":
                run_id = data["run_id"]
            if kind == "event" and data["subject"] == "research.step" and data["status"] == "done":
                break  # the first step is done: stop here, as a crash would
        items.close()
        assert run.payload(run_id)["status"] == "unfinished"
        assert [r["status"] for r in run.runs()] == ["unfinished"]
        searches, pages = list(web.searches()), list(web.pages_served())
        payload = run.resume_run(run_id)
        assert payload["status"] == "done"
        assert web.searches() == searches  # the finished search was not run again
        assert len(web.pages_served()) > len(pages)
        assert run.payload(run_id)["report"] == payload["report"]
        run.close()


def test_build_research_graph_for_notebooks(web: LoopbackWeb, tmp_path: Path) -> None:
    from local2 import build_research_graph

    overrides = research_overrides(web, tmp_path / "data")
    with FakeOllama(ResearchBrain()) as fake:
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides["critic"] = {"enabled": False}
        settings = load_settings(overrides=overrides)
        graph = build_research_graph(settings, backend="ollama", critic=None)
        state = graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "nb1"}})
    assert state["run_id"] == "nb1" and state["report"].startswith(f"# {QUESTION}")
    assert json.dumps(state["sources"])  # plain data, ready for a notebook


def test_a_url_no_one_gave_is_not_fetched(web: LoopbackWeb, tmp_path: Path) -> None:
    """A URL the model made up could carry data out, and a run cannot ask (docs/architecture.md,
    "Trust boundaries")."""
    made_up = f"{web.url}/pages/13_council_budget?q=Kelsby"
    given = web.page_url("06_tidal_mill")
    plan = {
        "goal": "read two pages",
        "steps": [
            {
                "id": "a",
                "description": "",
                "tool": "web_fetch",
                "args": {"url": made_up},
                "requires": [],
            },
            {
                "id": "b",
                "description": "",
                "tool": "web_fetch",
                "args": {"url": given},
                "requires": [],
            },
            {"id": "c", "description": "", "tool": "compose", "args": {}, "requires": ["a", "b"]},
        ],
    }
    with FakeOllama(ResearchBrain(plans=[plan])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        payload = run.run(f"How does the tide mill at {given} work?")
        run.close()
    assert web.pages_served() == ["06_tidal_mill"]  # only the page the question named
    skipped = next(s for s in payload["steps"] if s["status"] == "skipped")
    assert "neither the question nor a search gave" in skipped["error"]
    assert [s["url"] for s in payload["sources"]] == [given]


def test_on_postgres_any_process_lists_and_resumes_a_run_but_never_runs_it_twice(
    web: LoopbackWeb, tmp_path: Path, postgres_url: str
) -> None:
    """``checkpointer: postgres``: runs live on the server like conversations, in tables of
    their own (a run id may equal a session id without either seeing the other's state)."""

    def on_postgres(name: str) -> Any:
        overrides = research_overrides(web, tmp_path / name)  # nothing local is shared
        overrides["system"].update(
            ollama_host=fake.url, checkpointer="postgres", postgres_url=postgres_url
        )
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1)
        return load_settings(overrides=overrides)

    with FakeOllama(ResearchBrain()) as fake:
        first = Research(on_postgres("a"), backend="ollama")
        second = Research(on_postgres("b"), backend="ollama")  # as another process would
        items = first.stream(QUESTION, run_id="shared-1")
        for kind, data in items:
            if kind == "event" and data["subject"] == "research.step" and data["status"] == "done":
                break  # the first step is done, and the run still belongs to the first
        with pytest.raises(RunBusy, match="running in another process"):
            list(second.resume("shared-1"))
        assert [(r["run_id"], r["status"]) for r in second.runs()] == [("shared-1", "running")]
        items.close()  # the first process lets go of it (as when it is stopped or dies)
        assert second.payload("shared-1")["status"] == "unfinished"
        searches = list(web.searches())
        payload = second.resume_run("shared-1")
        assert payload["status"] == "done" and web.searches() == searches
        assert first.payload("shared-1")["report"] == payload["report"]
        assert [r["status"] for r in first.runs()] == ["done"]

        chat = Agent(
            on_postgres("a"),
            chat_model=ScriptedChatModel(replies=[reply("Hello.")]),
            memory=None,
            critic=None,
        )
        assert (
            chat.turns.ask("Hi", "shared-1")["answer"] == "Hello."
        )  # a session named like the run
        assert [t["user"] for t in chat.sessions.history("shared-1")] == ["Hi"]
        assert first.payload("shared-1")["report"] == payload["report"]
        chat.close()
        first.close()
        second.close()
    assert not list(tmp_path.glob("*/research.sqlite"))
