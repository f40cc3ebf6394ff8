"""Each branch of the error hierarchy reaches the terminal once, the same way: a message, the
fix when there is one, an exit code by branch (``cli/_errors.py``), and never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.kit.helpers import local2


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


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7"])
def test_the_allowed_hosts_error_gives_a_real_example(host: str, tmp_path: Path) -> None:
    """Beyond loopback with a token but no host names: the example is this machine's name
    (bound to every address) or the address itself, never empty."""
    env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_API_TOKEN": "t" * 32}
    result = local2("serve", "--host", host, "--port", "0", env=env)
    shown = " ".join(result.stderr.split())
    example = socket.gethostname() if host == "0.0.0.0" else host
    assert result.returncode == 2, shown
    assert f"server.allowed_hosts (e.g. [{example}])" in shown
    assert f"allowed_hosts: [{example}]" in shown


def test_an_ipv4_mapped_loopback_address_stays_on_this_machine() -> None:
    from local2.http._app import require_token
    from local2.ports import is_loopback

    assert is_loopback("::ffff:127.0.0.1") and is_loopback("[::ffff:127.0.0.2]")
    assert not is_loopback("::ffff:192.0.2.7")
    assert require_token("::ffff:127.0.0.1") is None  # no token needed, as for 127.0.0.1
