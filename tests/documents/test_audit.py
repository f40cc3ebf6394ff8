"""The audit log (runs/<session>/<query_id>.json) and the ``index`` / ``runs`` commands."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import local2.cli._files as commands
from local2.cli._main import main as cli_main
from local2.config import load_settings
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.storage._audit_log import (
    REDACTED,
    audit_record,
    audit_turn,
    folder_name,
    list_runs,
    redact_secrets,
    show_run,
    write_audit,
)
from local2.tools._files import file_tools
from tests.kit.helpers import make_settings

FAKE_OPENAI = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
SECRETS_FILE = (
    "# Deploy notes\n"
    f"OPENAI_API_KEY={FAKE_OPENAI}\n"
    "db password: hunter2-extra\n"
    + "".join(f"Paragraph {n}: the body of the file goes on and on.\n" for n in range(1, 60))
    + "LAST-LINE-MARKER\n"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"key is {FAKE_OPENAI} ok", FAKE_OPENAI),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk",
            "eyJhbG",
        ),
        ("curl -H 'Authorization: Bearer abcdef0123456789abcdef'", "abcdef0123456789abcdef"),
        ("export TAVILY_API_KEY=tvly-dev-0123456789abcdef", "tvly-dev-0123456789abcdef"),
        ("GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd", "ghp_0123456789"),
        ('{"api_key": "s3cr3t-value-1"}', "s3cr3t-value-1"),
        ("password = correct-horse-battery", "correct-horse-battery"),
        ("aws AKIAABCDEFGHIJKLMNOP used", "AKIAABCDEFGHIJKLMNOP"),
        ("SECRET_KEY: 'django-insecure-xyz123'", "django-insecure-xyz123"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
            "MIIEpAIBAAKCAQEA7",
        ),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "b3BlbnNzaC1rZXktdjEAAAA"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    out = redact_secrets(text, env_values=[])
    assert secret not in out
    assert "REDACTED" in out


def test_ordinary_text_is_kept() -> None:
    text = "The garden budget is 1200 euros; see notes/budget.md (sha256: 3f2a...)."
    assert redact_secrets(text, env_values=[]) == text
    assert redact_secrets("TAVILY_API_KEY=[REDACTED]", env_values=[]) == "TAVILY_API_KEY=[REDACTED]"


def test_secret_environment_values_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "plainlookingvalue99")
    record = audit_record({"query_id": "q", "query": "use plainlookingvalue99 please"})
    assert record["query"] == f"use {REDACTED} please"


def file_turn(tmp_path: Path, **files: Any) -> tuple[Any, dict[str, Any]]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(SECRETS_FILE)
    settings = make_settings(tmp_path, files={"roots": [str(notes)], **files})
    model = ScriptedChatModel(
        replies=[
            reply("", tool_calls=[{"name": "read_file", "args": {"path": "deploy.md"}}]),
            reply("The deploy notes in notes/deploy.md list the key and the password."),
        ]
    )
    agent = Agent(settings, chat_model=model, tools=file_tools(settings), memory=None, critic=None)
    payload = agent.turns.ask("What is in my deploy notes?", "sess-1")
    agent.close()
    return settings, payload


def test_turn_is_logged_with_evidence_previews_and_no_secrets(tmp_path: Path) -> None:
    settings, payload = file_turn(tmp_path)
    assert "LAST-LINE-MARKER" in payload["tool_calls"][0]["result"]  # the model saw it all
    path = write_audit(settings, payload)
    assert path == settings.data_dir / "runs" / "sess-1" / f"{payload['query_id']}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = path.read_text()
    record = json.loads(raw)
    assert record["query"] == "What is in my deploy notes?"
    assert record["model"] == payload["model"] and record["answer"] == payload["answer"]
    [call] = record["tool_calls"]
    assert call["tool"] == "read_file" and call["args"] == {"path": "deploy.md"}
    assert call["result_chars"] == len(payload["tool_calls"][0]["result"])
    assert call["result_preview"].startswith("File: notes/deploy.md\nsha256: ")
    assert "more chars not logged" in call["result_preview"]
    [evidence] = record["evidence"]
    assert evidence["kind"] == "file" and evidence["path"] == "notes/deploy.md"
    [read_event] = [e for e in payload["event_log"] if e["subject"] == "file.read"]
    assert evidence["sha256"] == read_event["sha256"] and len(evidence["sha256"]) == 64
    assert evidence["chars_full"] == len(SECRETS_FILE)
    assert "file.read" in [e["subject"] for e in record["events"]]
    assert "LAST-LINE-MARKER" not in raw and "Paragraph 50" not in raw
    assert FAKE_OPENAI not in raw and "hunter2-extra" not in raw
    assert "OPENAI_API_KEY=[REDACTED]" in raw


def test_preview_length_is_configurable(tmp_path: Path) -> None:
    settings, payload = file_turn(tmp_path, audit_preview_chars=0)
    record = json.loads(write_audit(settings, payload).read_text())
    body = record["tool_calls"][0]["result_preview"].split("\n---\n", 1)[1]
    assert body.startswith("… [") and "Deploy" not in body


def test_audit_turn_respects_the_switch(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, files={"audit_log": False})
    assert audit_turn(settings, {"query_id": "q1", "session_id": "s"}) is None
    assert not (settings.data_dir / "runs").exists()
    on = make_settings(tmp_path)
    assert audit_turn(on, {"query_id": "q1", "session_id": "s"}) == (
        on.data_dir / "runs" / "s" / "q1.json"
    )
    assert audit_turn(on, {"session_id": "s"}) is None  # a turn that never started


def test_hostile_ids_stay_inside_runs(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    path = write_audit(settings, {"session_id": "../../etc", "query_id": "../passwd"})
    assert path.resolve().is_relative_to((settings.data_dir / "runs").resolve())


def test_folder_names_are_one_to_one(tmp_path: Path) -> None:
    """Ids that used to share a folder (``runs/_.._x``, ``runs/unknown``) get their own."""
    settings = make_settings(tmp_path)
    ids = [
        "../../x",
        "..\\..\\x",
        "_.._x",
        ".",
        "..",
        "unknown",
        ".hidden",
        "hidden",
        None,
        "~2e",
        "a" * 128,
        "é" * 300,
        "é" * 301,
    ]
    names = [folder_name(i) for i in ids]
    assert len(set(names)) == len(ids), names
    assert folder_name("abc-DEF_1.2") == "abc-DEF_1.2"  # valid ids are their own name
    assert all("/" not in n and "\\" not in n and n not in (".", "..") for n in names)
    assert all(len(n) <= 255 for n in names)
    paths = {write_audit(settings, {"session_id": i, "query_id": "q"}).parent for i in ids}
    assert len(paths) == len(ids)
    runs = (settings.data_dir / "runs").resolve()
    assert all(p.resolve().parent == runs for p in paths)


def test_list_and_show(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    for session, qid in (("a", "q1"), ("a", "q2"), ("b", "q3")):
        write_audit(settings, {"session_id": session, "query_id": qid, "query": f"question {qid}"})
    rows = list_runs(settings)
    assert {r["query_id"] for r in rows} == {"q1", "q2", "q3"}
    assert {r["query_id"] for r in list_runs(settings, session="a")} == {"q1", "q2"}
    assert len(list_runs(settings, limit=1)) == 1
    assert show_run(settings, "q3")["query"] == "question q3"
    assert show_run(settings, "b/q3")["session_id"] == "b"
    assert show_run(settings, "nope") is None


# -- the commands ----------------------------------------------------------------------------

# The commands as `local2` mounts them (its callback loads settings; `register` adds ours),
# without the other feature modules, so these tests depend only on this feature.
app = typer.Typer(pretty_exceptions_enable=False)
app.callback()(cli_main)
commands.register(app)


def test_runs_commands(tmp_path: Path) -> None:
    settings = load_settings()  # the CLI's settings: data under $LOCAL2_HOME
    write_audit(settings, {"session_id": "s9", "query_id": "qq1", "query": "budget?"})
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["query_id"] for r in json.loads(listed.stdout)] == ["qq1"]
    table = runner.invoke(app, ["runs", "list", "--session", "s9"])
    assert "qq1" in table.stdout and "budget?" in table.stdout
    shown = runner.invoke(app, ["runs", "show", "qq1"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["session_id"] == "s9"
    missing = runner.invoke(app, ["runs", "show", "zzz"])
    assert missing.exit_code == 1


def test_runs_list_never_cuts_ids(tmp_path: Path) -> None:
    """Piped (as here) or in a narrow terminal, ids stay whole so `runs show` accepts them."""
    settings = load_settings()
    session = "acf766e9" * 8  # 64 characters
    write_audit(settings, {"session_id": session, "query_id": "f00dfeedbeef", "query": "q " * 80})
    out = CliRunner().invoke(app, ["runs", "list"], terminal_width=60)
    assert out.exit_code == 0, out.output
    assert session in out.stdout and "f00dfeedbeef" in out.stdout
    assert "…" not in out.stdout


def test_index_command(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(3):
        (notes / f"n{n}.md").write_text(f"# Note {n}\n\nsome words {n}\n")
    config = tmp_path / "config"
    config.mkdir()
    (config / "files.yaml").write_text(f"roots: [{notes}]\nembedder: lexical\n")
    runner = CliRunner()
    first = runner.invoke(app, ["--config", str(config), "index"])
    assert first.exit_code == 0, first.output
    assert "3 files: 3 added, 0 updated, 0 unchanged, 0 removed" in first.stdout
    (notes / "n1.md").write_text("# Note 1\n\nchanged\n")
    second = runner.invoke(app, ["--config", str(config), "index"])
    assert "1 updated, 2 unchanged" in second.stdout
    rebuilt = runner.invoke(app, ["--config", str(config), "index", "--rebuild"])
    assert "3 added" in rebuilt.stdout


def test_index_command_without_roots(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["index"])
    assert result.exit_code == 1
    assert "no folders to index" in result.output
