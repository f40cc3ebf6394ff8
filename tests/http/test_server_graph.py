"""The graph as LangGraph Server loads it: langgraph.json -> local2.platform.graph:graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.store.memory import InMemoryStore

from local2.platform.graph import make_graph
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.http.helpers import LANGGRAPH, ROOT
from tests.kit.helpers import make_settings


def test_langgraph_json_names_the_module_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    path, _, name = config["graphs"]["local2"].partition(":")
    source = (ROOT / path).read_text(encoding="utf-8")
    assert name == "graph" and f"\n{name} = make_graph()" in source


def test_factory_builds_a_graph_without_its_own_checkpointer(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as fake:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": fake.url},
            generator={"backend": "ollama"},
            memory={"enabled": False},
            critic={"enabled": False},
        )
        store = InMemoryStore()
        graph = make_graph(settings, store=store)
        assert graph.checkpointer is None  # LangGraph Server supplies its own
        state = graph.invoke({"query": "What is the capital of France?"})
    assert "Paris" in state["answer"] and state["thinking"]
    (turn,) = store.search(("local2", "turns"))
    assert turn.key == state["history_head"] and "Paris" in turn.value["assistant"]
    assert not (settings.data_dir / "checkpoints.sqlite").exists()


def langgraph_dev(tmp_path: Path, env: dict[str, str]) -> Any:
    """``langgraph dev`` serving the shipped langgraph.json (test_server_auth's, which
    imports this module's names)."""
    from tests.http.helpers import langgraph_dev as serve

    return serve(tmp_path, env)


def dev_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """What ``langgraph dev`` runs with here: a home of its own, no analytics or tracing."""
    return {
        "LOCAL2_HOME": str(tmp_path / "home"),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        **env,
    }


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")
def test_langgraph_dev_serves_the_graph_with_threads_as_sessions(tmp_path: Path) -> None:
    with (
        FakeOllama(RuleBrain()) as fake,
        langgraph_dev(tmp_path, dev_env(tmp_path, OLLAMA_HOST=fake.url)) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        thread = client.post("/threads", json={}).json()["thread_id"]
        answers = []
        for question in ("Tell me about the Python GIL.", "Why was it introduced?"):
            run = client.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "local2", "input": {"query": question}},
            )
            assert run.status_code == 200, run.text
            answers.append(run.json()["answer"])
        history = client.post(f"/threads/{thread}/history", json={"limit": 50}).json()
        stored = client.post(
            "/store/items/search",
            json={"namespace_prefix": ["local2", "turns"], "limit": 50},
        ).json()["items"]
    assert "Global Interpreter Lock" in answers[0]
    assert (
        "introduced" in answers[1] and "What do you mean" not in answers[1]
    )  # the thread's history
    assert len(history) > 6  # the server's checkpointer kept every step
    # The clean turns are in the platform's store, not in a local file.
    assert sorted(i["value"]["user"] for i in stored) == [
        "Tell me about the Python GIL.",
        "Why was it introduced?",
    ]
    assert {i["value"]["session_id"] for i in stored} == {thread}
    assert not (tmp_path / "home" / "checkpoints.sqlite").exists()


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")
def test_langgraph_dev_shows_a_research_pause_and_resumes_it(tmp_path: Path) -> None:
    """The research graph on the Server: the plan under review is the thread's interrupt
    (with the answer's form), and ``Command(resume=...)`` runs the rest of it."""
    from local2_testkit.research_brain import ResearchBrain
    from local2_testkit.research_web import LoopbackWeb, load_pages

    corpus = ROOT / "bench" / "extraction_corpus" / "pages"
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(corpus)) as web:
        conf = tmp_path / "conf"
        conf.mkdir()
        (conf / "web.yaml").write_text(
            f"search:\n  provider: searxng\n  searxng_url: {web.url}\n"
            f"fetch:\n  allow_hosts: ['{web.host}']\n"
        )
        (conf / "memory.yaml").write_text("enabled: false\n")
        (conf / "critic.yaml").write_text("enabled: false\n")
        (conf / "research.yaml").write_text("max_rounds: 1\nretry_backoff_s: 0.05\n")
        env = dev_env(tmp_path, OLLAMA_HOST=fake.url, LOCAL2_CONFIG=str(conf))
        with (
            langgraph_dev(tmp_path, env) as base,
            httpx.Client(base_url=base, timeout=120) as client,
        ):
            thread = client.post("/threads", json={}).json()["thread_id"]
            question = {"question": "Why did Kelsby keep its harbour swing bridge?", "review": True}
            paused = client.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "local2-research", "input": question},
            )
            assert paused.status_code == 200, paused.text
            state = client.get(f"/threads/{thread}/state").json()
            searched_before = list(web.searches())
            done = client.post(
                f"/threads/{thread}/runs/wait",
                json={"assistant_id": "local2-research", "command": {"resume": {"approve": True}}},
            )
            assert done.status_code == 200, done.text
            after = client.get(f"/threads/{thread}/state").json()
    assert paused.json()["__interrupt__"][0]["value"]["waits_for"] == "plan"
    (interrupt,) = state["interrupts"]
    assert interrupt["value"]["waits_for"] == "plan"
    assert [q["id"] for q in interrupt["value"]["subquestions"]] == ["q1"]
    assert "approve" in interrupt["response_schema"]["properties"]  # Studio's form
    assert searched_before == [] and web.searches()  # nothing ran before the approval
    finished = done.json()
    assert finished["report"].startswith("# Why did Kelsby") and "__interrupt__" not in finished
    assert after["interrupts"] == [] and after["next"] == []
