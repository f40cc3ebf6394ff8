"""The terminal as a newcomer meets it (issue 52): ``--version``, help without Python types,
``local2 index FOLDER``, and model text printed as text (never read as console markup)."""

from __future__ import annotations

import importlib.metadata
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import local2.cli._render as render
from local2.cli._main import app
from tests.house.helpers import cli_commands
from tests.kit.helpers import local2

TYPE_DEBRIS = re.compile(r"<(?:bool|str|int|float|path|file|list\[|[a-z]+ range)[^>]*>")


def test_version() -> None:
    done = local2("--version", env={})
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"local2 {importlib.metadata.version('local2')}\n"


def test_no_help_shows_a_python_type_or_cuts_a_sentence() -> None:
    runner = CliRunner()
    paths = [(), *cli_commands(), *{path[:1] for path in cli_commands() if len(path) > 1}]
    shown = {}
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        shown[" ".join(path)] = result.output
    debris = {p: TYPE_DEBRIS.findall(text) for p, text in shown.items()}
    assert {p: d for p, d in debris.items() if d} == {}
    root = shown[""]
    assert "--help  " in root and "--version" in root
    assert "Ctrl+C stops an answer" in root  # a docstring's line break is not a line break
    assert re.search(r"--session\s+-s\s+TEXT", shown["ask"])
    assert re.search(r"--temperature-b\s+NUMBER", shown["ask"])
    assert "QUERY" in shown["ask"] and "FOLDER" in shown["index"]


def test_index_folder_adds_it_to_the_config_files_roots_keeping_the_file(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ferry.md").write_text("The Kelsby ferry runs eleven times on Sundays.\n")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "files.yaml").write_text("# my folders\nroots: []  # none yet\nmax_chars: 5000\n")
    env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf)}
    done = local2("index", str(notes), env=env)
    assert done.returncode == 0, done.stderr
    assert f"Added {notes} to roots in {conf / 'files.yaml'}" in done.stderr
    assert done.stdout.startswith("1 files: 1 added")
    assert (conf / "files.yaml").read_text() == (
        f'# my folders\nroots: ["{notes}"]  # none yet\nmax_chars: 5000\n'
    )
    again = local2("index", str(notes), env=env)  # already a root: indexed, nothing added
    assert again.returncode == 0 and "Added" not in again.stderr
    assert again.stdout.startswith("1 files: 0 added, 0 updated, 1 unchanged")


def test_index_folder_without_a_config_directory_says_what_to_write_and_where(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    done = local2("index", str(notes), env={"LOCAL2_HOME": str(tmp_path / "home")})
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert f"{notes} is not among the folders LoCAL2 may read (files.roots)" in said
    assert "~/.config/local2/files.yaml" in said and f'roots: ["{notes}"]' in said
    assert "export LOCAL2_CONFIG=~/.config/local2" in said
    missing = local2("index", str(tmp_path / "nowhere"), env={"LOCAL2_HOME": str(tmp_path)})
    assert missing.returncode == 1 and "not a folder" in missing.stderr


ANSWER = "**Paris** is the capital [m1a2b3c4d5e6]; see [the atlas](https://atlas.example/fr)."


@pytest.mark.parametrize("terminal", [True, False])
def test_an_answer_is_text_not_console_markup(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=terminal, width=100, color_system=None)
    monkeypatch.setattr(render, "out", console)
    render.show_item("answer", {"answer": ANSWER}, render.hold_back(False))
    shown = screen.getvalue()
    assert "[m1a2b3c4d5e6]" in shown  # a memory's citation, eaten as markup before
    if terminal:  # rendered: no Markdown marks, the link's address shown
        assert "**" not in shown and "Paris is the capital" in shown
        assert "https://atlas.example/fr" in shown
    else:  # piped: the answer exactly
        assert shown == ANSWER + "\n"


def test_tool_text_that_looks_like_markup_does_not_stop_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(render, "err", Console(file=screen, width=200, color_system=None))
    call = {"subject": "tool.request.read_file", "tool": "read_file", "args": {"path": "[/tmp]"}}
    render.show_item("event", call, {})
    failed = {"subject": "tool.result.read_file", "tool": "read_file", "error": "no [/tmp] here"}
    render.show_item("event", failed, {})
    assert '{"path": "[/tmp]"}' in screen.getvalue() and "no [/tmp] here" in screen.getvalue()
