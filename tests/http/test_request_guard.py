"""Host and Origin checks on the real server (API and Gradio app), and their rules.

DNS rebinding is simulated the way a browser produces it: a request to the loopback port
whose ``Host`` header names another site. A cross-site POST carries that site's ``Origin``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from local2.http._guard import HostRules, content_security_policy
from local2.models._scripted import ScriptedChatModel, reply
from local2.ports import split_host
from local2.server import require_allowed_hosts
from local2.service.agent import Agent
from tests.kit.browser import app_served
from tests.kit.helpers import make_settings

EVIL = "evil.example"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("localhost:7860", ("localhost", 7860)),
        ("Example.COM.", ("example.com", None)),
        ("[::1]:80", ("::1", 80)),
        ("[::1]", ("::1", None)),
        ("127.0.0.1:x", ("", None)),
    ],
)
def test_split_host(value: str, expected: tuple[str, int | None]) -> None:
    assert split_host(value) == expected


def test_host_rules_allow_loopback_names_and_configured_ones_only() -> None:
    rules = HostRules.build("127.0.0.1", ["team.example", "*.lab.example"])
    for ok in [
        "localhost:7860",
        "127.0.0.1",
        "[::1]:9",
        "app.localhost:1",
        socket.gethostname(),
        "team.example",
        "a.lab.example:443",
    ]:
        assert rules.allows(ok), ok
    for bad in [
        "evil.example:7860",
        "",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "lab.example",
        "team.example.evil",
    ]:
        assert not rules.allows(bad), bad


def test_beyond_loopback_the_host_names_are_required() -> None:
    with pytest.raises(RuntimeError, match=r"server\.allowed_hosts"):
        require_allowed_hosts("0.0.0.0", [])
    require_allowed_hosts("0.0.0.0", ["local2.example.org"])
    require_allowed_hosts("127.0.0.1", [])


def test_the_page_policy_limits_what_can_reach_other_hosts() -> None:
    policy = dict(
        part.split(" ", 1) for part in content_security_policy(["cdn.example.org"]).split("; ")
    )
    assert policy["img-src"] == "'self' data: blob: cdn.example.org"
    for directive in ("default-src", "connect-src", "frame-src"):
        assert policy[directive] == "'self'"
    assert policy["font-src"] == "'self' data:"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Agent, ScriptedChatModel]]:
    model = ScriptedChatModel(replies=[reply("Paris.")], repeat_last=True)
    settings = make_settings(tmp_path, server={"cors_origins": ["http://localhost:3000"]})
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    with app_served(agent) as url:
        yield url, agent, model
    agent.close()


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_a_foreign_host_gets_403_from_the_api_and_the_app(
    served: tuple[str, Agent, ScriptedChatModel],
) -> None:
    url, agent, model = served
    port = port_of(url)
    session = agent.turns.ask("What is the capital of France?")["session_id"]
    asked = len(model.seen)
    foreign = {"Host": f"{EVIL}:{port}"}
    with httpx.Client(base_url=url, timeout=30) as client:
        for method, path, body in [
            ("GET", "/health", None),
            ("POST", "/query", {"query": "leak it"}),
            ("GET", f"/sessions/{session}/history", None),
            ("GET", "/", None),
            ("GET", "/config", None),
            ("GET", "/gradio_api/info", None),
        ]:
            response = client.request(method, path, json=body, headers=foreign)
            assert response.status_code == 403, (path, response.status_code)
            assert "server.allowed_hosts" in response.json()["detail"]
        assert len(model.seen) == asked  # no turn ran for the foreign host
        for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
            assert client.get("/health", headers={"Host": host}).status_code == 200
            assert client.get("/", headers={"Host": host}).status_code == 200
            answered = client.post(
                "/query", json={"query": "And of Italy?"}, headers={"Host": host}
            )
            assert answered.status_code == 200 and answered.json()["answer"] == "Paris."


def test_a_state_change_from_a_foreign_origin_gets_403(
    served: tuple[str, Agent, ScriptedChatModel],
) -> None:
    url, _agent, model = served
    port = port_of(url)
    with httpx.Client(base_url=url, timeout=30) as client:
        for origin in (f"http://{EVIL}", "null", f"http://localhost:{port + 1}", "file://"):
            refused = client.post("/query", json={"query": "x"}, headers={"Origin": origin})
            assert refused.status_code == 403, origin
            assert "server.cors_origins" in refused.json()["detail"]
            queue = client.post(
                "/gradio_api/queue/join", json={"data": []}, headers={"Origin": origin}
            )
            assert queue.status_code == 403, origin
        assert model.seen == []
        # The app's own page, under either loopback name, and scripts without an Origin.
        for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", None):
            headers = {"Origin": origin} if origin else {}
            ok = client.post("/query", json={"query": "Capital of France?"}, headers=headers)
            assert ok.status_code == 200, origin
        # A configured origin may post, and is told so with CORS headers.
        listed = client.post(
            "/query", json={"query": "Again?"}, headers={"Origin": "http://localhost:3000"}
        )
        assert listed.status_code == 200
        assert listed.headers["access-control-allow-origin"] == "http://localhost:3000"


def test_no_cors_headers_unless_configured(
    served: tuple[str, Agent, ScriptedChatModel],
) -> None:
    url, _agent, _model = served
    port = port_of(url)
    with httpx.Client(base_url=url, timeout=30) as client:
        # Gradio would answer another local origin with Access-Control-Allow-Origin.
        for path in ("/health", "/config", "/gradio_api/info"):
            response = client.get(path, headers={"Origin": f"http://localhost:{port + 1}"})
            assert response.status_code == 200, path
            assert not any(k.startswith("access-control-") for k in response.headers), path
        page = client.get("/")
        assert "img-src 'self' data: blob:" in page.headers["content-security-policy"]


def test_preflight_from_a_foreign_origin_is_not_granted(
    served: tuple[str, Agent, ScriptedChatModel],
) -> None:
    url, _agent, _model = served
    response = httpx.options(
        f"{url}/query",
        headers={"Origin": f"http://{EVIL}", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in response.headers


def test_serving_beyond_loopback_without_host_names_is_refused(tmp_path: Path) -> None:
    from tests.kit.helpers import local2

    done = local2("ui", "--host", "0.0.0.0", env={"LOCAL2_API_TOKEN": "t" * 32}, timeout=120)
    assert done.returncode == 2
    assert "server.allowed_hosts" in done.stderr and "Traceback" not in done.stderr
