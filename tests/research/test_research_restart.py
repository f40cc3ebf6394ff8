"""A run waiting for its plan survives a crash of ``local2 serve``: the real process killed
with SIGKILL while the run waits for review, started again on the same data directory, the
plan approved over HTTP, and the run goes on from its pause with nothing repeated (the
planner is not asked again, no search is made twice) and nothing lost (its plan, its pause
and its event log as they were)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from local2_testkit.serve_process import ServeProcess
from tests.research.helpers import BRIDGE, OTTERS, branches, plan_requests, read_events

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"


def write_config(directory: Path, web: LoopbackWeb, ollama: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "system.yaml").write_text(f"ollama_host: {ollama}\n")
    (directory / "generator.yaml").write_text("backend: ollama\nmodel: qwen3:4b\n")
    (directory / "memory.yaml").write_text("enabled: false\n")
    (directory / "critic.yaml").write_text("enabled: false\n")
    (directory / "web.yaml").write_text(
        f"search:\n  provider: searxng\n  searxng_url: {web.url}\n"
        f"fetch:\n  allow_hosts: ['{web.host}']\n"
    )
    (directory / "research.yaml").write_text("max_rounds: 1\nretry_backoff_s: 0.05\n")
    return directory


def test_a_run_paused_for_review_goes_on_after_serve_is_killed(tmp_path: Path) -> None:
    brain = ResearchBrain(plans=[branches(BRIDGE, OTTERS)])
    with FakeOllama(brain) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        config = write_config(tmp_path / "conf", web, fake.url)
        env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(config)}
        first = ServeProcess(config, env=env).start()
        try:
            with httpx.Client(base_url=first.url, timeout=120) as client:
                body = {"question": "Why did Kelsby keep its bridge?", "review": True}
                with client.stream("POST", "/research", json=body) as response:
                    before = read_events(response)
                run_id = before[0][1]["run_id"]
                assert before[-1][0] == "awaiting_input"
                shown = client.get(f"/research/{run_id}").json()
        finally:
            first.kill()  # SIGKILL: no clean-up runs
            first.stop()
        assert shown["status"] == "awaiting_input" and web.hits == []

        with (
            ServeProcess(config, env=env) as second,
            httpx.Client(base_url=second.url, timeout=120) as client,
        ):
            again = client.get(f"/research/{run_id}").json()
            assert again["status"] == "awaiting_input"
            assert again["awaiting"]["subquestions"] == shown["awaiting"]["subquestions"]
            assert again["event_log"] == shown["event_log"]  # nothing lost
            with client.stream(
                "POST", f"/research/{run_id}/input", json={"approve": True}
            ) as response:
                assert response.status_code == 200, response.read()
                rest = read_events(response)
            payload = client.get(f"/research/{run_id}").json()

    assert rest[-1][0] == "done" and payload["status"] == "done" and payload["report"]
    assert len(plan_requests(fake)) == 1  # the planner was asked once, before the kill
    assert Counter(web.searches()) == Counter([BRIDGE, OTTERS])  # each search once
    served = web.pages_served()
    assert served and len(served) == len(set(served))
    log = payload["event_log"]
    assert log[: len(shown["event_log"])] == shown["event_log"]  # the log goes on from there
    plans = [e for e in log if e["subject"] == "research.plan"]
    assert len(plans) == 1 and [p["origin"] for p in payload["plan"]] == ["model"]
    started = Counter(
        e["id"] for e in log if e["subject"] == "research.step" and e["status"] == "started"
    )
    assert started and set(started.values()) == {1}
