"""``local2 research`` as a person runs it: a real process, the Ollama-protocol server, the
loopback web of captured pages; killed mid-run and resumed; and on the embedded model."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local2.config._schema import ResearchSettings
from local2.research._plan import plan_schema, schema_errors
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from local2_testkit.results import web_steps
from tests.kit.helpers import local2
from tests.research.helpers import CORPUS, QUESTION, environment


@pytest.fixture
def web() -> Iterator[LoopbackWeb]:
    with LoopbackWeb(load_pages(CORPUS)) as served:
        yield served


def test_research_report_keeps_only_real_citations_and_sources_read(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    brain = ResearchBrain(
        extra=["The bridge carries 48,000 cars a day [1].", "Kelsby also has a castle [42]."]
    )
    with FakeOllama(brain) as fake:
        env = environment(web, tmp_path, fake.url)
        out = tmp_path / "report.md"
        result = local2(
            "research",
            QUESTION,
            "--json",
            "--out",
            str(out),
            "--max-rounds",
            "1",
            "--backend",
            "ollama",
            env=env,
        )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert result.stderr.startswith(f"run {payload['run_id']}")
    assert "✓ s1 web_search" in result.stderr and "Report:" in result.stderr
    body = payload["report"].split("## References")[0]
    assert "48,000" not in body and "castle" not in body
    assert {u["sentence"] for u in payload["unsupported"]} >= {
        "The bridge carries 48,000 cars a day [1].",
        "Kelsby also has a castle [42].",
    }
    read = {web.page_url(name) for name in web.pages_served()}
    pages = {s["url"] for s in payload["sources"] if s["kind"] == "page"}
    assert pages == read  # the references hold exactly the pages read
    # down the ranking while it holds, within the round's budget
    assert 2 <= len(read) <= ResearchSettings().fetch_count
    cited = {s["url"] for s in payload["sources"] if s["kind"] == "result"}
    assert all(url.startswith(web.url) for url in cited)  # the rest are cited search results
    assert out.read_text(encoding="utf-8") == payload["report"]


def _lines(stream: object) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_a_killed_run_resumes_without_repeating_a_finished_steps_calls(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        env = environment(web, tmp_path, fake.url)
        web.hold_pages.set()  # the read step hangs: the run is killed inside it
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local2.cli",
                "research",
                QUESTION,
                "--json",
                "--max-rounds",
                "1",
                "--backend",
                "ollama",
            ],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines = _lines(process.stderr)
        seen: list[str] = []
        deadline = time.time() + 120
        while not any("✓ s1" in line for line in seen):
            assert time.time() < deadline and process.poll() is None, "".join(seen)
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                continue
        time.sleep(0.3)  # the read step has started its fetches
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        run_id = seen[0].split()[-1]
        web.release()
        assert web.searches() == [QUESTION]
        listed = json.loads(local2("research", "list", "--json", env=env).stdout)
        assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "unfinished")]

        resumed = local2("research", "--resume", run_id, "--json", "--backend", "ollama", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.startswith(f"resuming run {run_id}")
    payload = json.loads(resumed.stdout)
    assert payload["status"] == "done" and payload["run_id"] == run_id
    assert web.searches() == [QUESTION]  # the finished search was not repeated
    assert "✓ s1" not in resumed.stderr  # nor shown as run again
    assert [s["status"] for s in payload["steps"]] == ["done", "done", "done"]
    again = local2("research", "--resume", run_id, "--json", env=env)
    assert "finished already" in again.stderr  # finished: just returned, no model needed
    assert json.loads(again.stdout)["report"] == payload["report"]


def test_bad_input_gets_a_clear_message(tmp_path: Path) -> None:
    env = {"LOCAL2_HOME": str(tmp_path / "home")}
    missing = local2("research", "--resume", "nope", "--backend", "embedded", env=env)
    assert missing.returncode == 3 and "No research run 'nope'" in missing.stderr
    empty = local2("research", env=env)
    assert empty.returncode == 2 and "Give a question" in empty.stderr
    for result in (missing, empty):
        assert "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_embedded_model_ends_with_a_schema_valid_plan_and_a_report(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    env = environment(web, tmp_path, "http://127.0.0.1:9")
    # The grade is not what this test is about; a shorter report prompt keeps it quick.
    (tmp_path / "conf" / "critic.yaml").write_text("enabled: false\n")
    (tmp_path / "conf" / "research.yaml").write_text("compose_chars: 3000\n")
    result = local2(
        "research",
        "How do tide mills work?",
        "--json",
        "--max-rounds",
        "1",
        "--backend",
        "embedded",
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    plan = payload["plan"][0]
    assert plan["origin"] in ("model", "repaired", "fallback")
    assert plan["attempts"] and all(a["schema_valid"] for a in plan["attempts"])
    steps = [
        {k: s[k] for k in ("id", "description", "tool", "args", "requires")} for s in plan["steps"]
    ]
    assert (
        schema_errors({"goal": plan["goal"][:100], "steps": steps}, plan_schema(web_steps(), 8))
        == []
    )
    assert payload["status"] == "done" and payload["report"].startswith("# How do tide mills work?")
    assert web.searches()  # it searched the loopback web


NO_SOURCES_QUESTION = "What are the health benefits of green tea?"


def shown_as_no_sources(result: subprocess.CompletedProcess[str]) -> str:
    """What a person sees of a run that found no source: exit 4, no traceback, the embedded
    model's notice, "No sources" on stderr, and on stdout a plain-text page (the question,
    that no report was written, what was tried, the next step) with no Markdown and nothing a
    model wrote. Returns that page."""
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr
    assert "embedded demo model" in result.stderr  # no Ollama: the embedded model planned
    assert "No sources" in result.stderr and "no report was written" in result.stderr
    report = result.stdout.split("\n", 1)[1]  # after "run <id>"
    assert "No report: no source could be gathered, so nothing was written." in report
    assert "What was tried:" in report and "Next step: " in report
    # Plain text: no Markdown marks or escapes, and nothing a model wrote.
    assert not re.search(r"\\[_()>`*]|\*\*|~~|^#", report, re.M), report
    assert "Removed as unsupported" not in report and "References" not in report
    lines = [line for line in report.splitlines() if line.strip()]
    assert lines[0] == NO_SOURCES_QUESTION and set(lines[1]) == {"="}
    told = ("No report:", "What was tried:", "- searched ", "Next step: ")
    assert all(line.startswith(told) for line in lines[2:]), lines
    return report


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_on_the_embedded_model_a_run_with_no_source_exits_4_with_its_next_step(
    tmp_path: Path,
) -> None:
    """As a newcomer runs it with no Ollama: every search fails (keyless ddgs through a proxy
    where nothing listens: the connection is refused), so the run ends no_sources, exits 4,
    prints what it tried and the next step as plain text, and no model text; with "My library
    only" and an empty library, it says the library is empty."""
    pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")
    env = {"LOCAL2_HOME": str(tmp_path / "home")}
    question = NO_SOURCES_QUESTION
    web = local2("research", question, "--max-rounds", "1", env=env, timeout=600)
    library = local2(
        "research", question, "--sources", "library", "--max-rounds", "1", env=env, timeout=600
    )
    listed = json.loads(local2("research", "list", "--json", env=env).stdout)
    refused = shown_as_no_sources(web)
    assert f'- searched the web for "{question}": cannot reach the search engines: the ' in refused
    assert "Next step: Check this machine's network connection and any proxy or firewall" in refused
    empty = shown_as_no_sources(library)
    assert f'- searched your library for "{question}": your library is empty' in empty
    assert "Research on the web first" in empty and "try again later" not in empty
    assert [r["status"] for r in listed] == ["no_sources", "no_sources"]
    shown = local2("research", "list", env=env).stdout
    assert shown.count("no_sources") == 2, shown


def can_cut_the_network() -> bool:
    """Whether this machine lets a process run in a network namespace of its own (no
    interface but a loopback that is down: nothing can be reached or looked up)."""
    if shutil.which("unshare") is None:
        return False
    tried = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
    return tried.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(not can_cut_the_network(), reason="no network namespaces (unshare -rn)")
def test_offline_on_the_embedded_model_says_no_network_and_what_works_offline(
    tmp_path: Path,
) -> None:
    """A machine with no network at all (its own network namespace, so the real ddgs client
    fails its name lookups as it does offline, with no proxy in the way): exit 4, the search
    tried said to have found no network, and the next step is the library or the corpus."""
    pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")
    env = {k: v for k, v in os.environ.items() if k != "DDGS_PROXY"}
    env["LOCAL2_HOME"] = str(tmp_path / "home")
    command = [str(Path(sys.executable).with_name("local2")), "research", NO_SOURCES_QUESTION]
    result = subprocess.run(
        ["unshare", "-rn", *command, "--max-rounds", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    page = shown_as_no_sources(result)
    assert f'- searched the web for "{NO_SOURCES_QUESTION}": no network: this machine ' in page
    assert "Next step: This machine could not reach the web. Research your library" in page
    assert "--sources library" in page and "`corpus`" not in page and "corpus" in page
