"""MCP as a new user meets it: the example server in config, then `doctor` and `ask`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from local2_testkit.ollama_server import FakeOllama, Reply, ScriptBrain
from tests.kit.helpers import local2

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_units_server.py"


def answer_from_tool(request: dict[str, Any]) -> Reply:
    tool_output = request["messages"][-1]["content"]
    line = next(ln for ln in tool_output.splitlines() if " = " in ln)
    return Reply(thinking="The server converted it.", content=f"That is {line.strip()}.")


def test_example_server_in_config_shows_in_doctor_and_answers_ask(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "mcp.yaml").write_text(
        f"servers:\n  - name: units\n    command: {sys.executable}\n    args: [{EXAMPLE}]\n"
    )
    (conf / "memory.yaml").write_text("enabled: false\n")
    (conf / "critic.yaml").write_text("enabled: false\n")
    brain = ScriptBrain(
        [
            Reply(
                thinking="A unit conversion: the units server can do it.",
                tool_calls=[
                    {
                        "name": "units__convert_units",
                        "arguments": {"value": 5, "from_unit": "km", "to_unit": "mi"},
                    }
                ],
            ),
            answer_from_tool,
        ]
    )
    with FakeOllama(brain) as server:
        env = {
            "OLLAMA_HOST": server.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(conf),
        }

        doctor = local2("doctor", "--json", env=env)
        checks = {c["name"]: c for c in json.loads(doctor.stdout)}
        assert checks["mcp: units"]["status"] == "ok", checks
        assert "convert_units" in checks["mcp: units"]["detail"]

        asked = local2("ask", "How many miles is 5 km?", "--json", "--backend", "ollama", env=env)
        assert asked.returncode == 0, asked.stderr
        payload = json.loads(asked.stdout)
        [call] = payload["tool_calls"]
        assert call["tool"] == "units__convert_units" and call["error"] is None
        assert "5 km = 3.10686 mi" in call["result"]
        assert "3.10686 mi" in payload["answer"]
        offered = [t["function"]["name"] for t in server.chat_requests[0]["tools"]]
        assert "units__convert_units" in offered and "units__add" in offered
