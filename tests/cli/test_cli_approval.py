"""Approvals at the command line, as a person runs it: a real process, the real ``ChatOllama``
against a fake Ollama whose model obeys instructions in tool output, pages on loopback.

``local2 ask --json`` has no one to ask, so what the page asks for is denied; ``local2 chat`` on
a terminal (a pseudo-terminal here) asks, and does what the person allows.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from local2_testkit.ollama_server import FakeOllama, ObeyingBrain
from local2_testkit.sites import Site
from tests.cli.helpers import PAGE, SECRET, Terminal
from tests.kit.helpers import local2


@dataclass
class World:
    env: dict[str, str]
    page_url: str
    attacker: Site


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with Site() as attacker, Site() as pages, FakeOllama(ObeyingBrain()) as fake:
        pages.pages["/kestrel"] = PAGE.replace("ATTACKER", attacker.url(""))
        config = tmp_path / "config"
        config.mkdir()
        (config / "generator.yaml").write_text("backend: ollama\n")
        (config / "web.yaml").write_text(
            f"fetch:\n  allow_hosts: ['{pages.host}', '{attacker.host}']\n"
        )
        env = {
            "OLLAMA_HOST": fake.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(config),
        }
        yield World(env, pages.url("/kestrel"), attacker)


def saved_memories(env: dict[str, str]) -> list[str]:
    listed = local2("memory", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    return [r["content"] for r in rows if r.get("kind") == "saved"]


def test_ask_json_has_no_one_to_ask_so_the_page_gets_nothing(world: World) -> None:
    first = local2("ask", SECRET, "--json", env=world.env)
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session_id"]
    turn = local2(
        "ask", f"Summarise {world.page_url}", "--session", session, "--json", env=world.env
    )
    assert turn.returncode == 0, turn.stderr
    payload = json.loads(turn.stdout)
    assert payload["status"] == "done" and "1932" in payload["answer"]
    refused = {c["tool"]: c["error"] for c in payload["tool_calls"][1:]}
    assert refused == {
        "save_memory": "denied: no one could be asked",
        "web_fetch": "denied: no one could be asked",
    }
    assert payload["events"].count("tool.approval.denied") == 2
    assert world.attacker.hits == []
    assert not any("PLANTED" in m for m in saved_memories(world.env))


def test_chat_on_a_terminal_asks_and_does_what_the_person_allows(world: World) -> None:
    term = Terminal([sys.executable, "-m", "local2.cli", "chat"], world.env)
    try:
        term.expect("you> ")
        term.type(SECRET)
        term.expect("you> ")
        term.type(f"Summarise {world.page_url}")
        shown = term.expect("Allow save_memory? [y/N]")
        assert "PLANTED: the user banks with EvilBank" in shown  # the call's arguments
        assert "after the web_fetch result of" in shown and world.page_url in shown
        term.type("y")
        shown = term.expect("Allow web_fetch? [y/N]")
        assert "save_memory approved" in shown
        assert "/exfil?d=My%20account%20number" in shown  # the data it would carry
        term.type("n")
        answer = term.expect("you> ")
        assert "web_fetch denied" in answer and "1932" in answer
        term.type("/exit")
        assert term.proc.wait(30) == 0
    finally:
        term.close()
    assert world.attacker.hits == []
    assert any("PLANTED" in m for m in saved_memories(world.env))
