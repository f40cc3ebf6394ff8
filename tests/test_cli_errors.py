"""Each branch of the error hierarchy reaches the terminal once, the same way: a message, the
fix when there is one, an exit code by branch (``cli/errors.py``), and never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import local2


def broken_config(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "conf"
    config.mkdir()
    (config / "generator.yaml").write_text("num_ctx: [oops\n")
    return {"LOCAL2_CONFIG": str(config)}


CASES = {
    # invalid input: 2, with the rule to follow
    "invalid id": (("history", "bad id"), {}, 2, "Invalid session id 'bad id': use 1-128"),
    # not found: 3
    "unknown session": (("history", "nobody-here"), {}, 3, "No session 'nobody-here'"),
    # settings: 1, said to be the configuration
    "broken config": (("history", "s1"), "config", 1, "Configuration error: "),
    # unavailable: 1, with the fix
    "model unavailable": (
        ("ask", "hello", "--backend", "ollama"),
        {"OLLAMA_HOST": "http://127.0.0.1:9"},
        1,
        "Fix: Start it with: ollama serve",
    ),
    # unsafe to serve: 2, with the fix, before anything is loaded
    "no token beyond loopback": (
        ("serve", "--host", "0.0.0.0"),
        {"LOCAL2_API_TOKEN": ""},
        2,
        "Fix: export LOCAL2_API_TOKEN=",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_error_is_one_message_and_one_exit_code(case: str, tmp_path: Path) -> None:
    args, extra, code, said = CASES[case]
    env = {"LOCAL2_HOME": str(tmp_path / "home")}
    env.update(broken_config(tmp_path) if extra == "config" else extra)  # type: ignore[arg-type]
    result = local2(*args, env=env)
    shown = " ".join((result.stderr + result.stdout).split())  # rich may wrap long lines
    assert result.returncode == code, shown
    assert said in shown
    assert "Traceback" not in shown
