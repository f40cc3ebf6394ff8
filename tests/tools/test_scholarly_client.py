"""The one HTTP client of the scholarly sources, real httpx against a loopback server: a 429
or 5xx asked again once after the server's ``Retry-After``, an unreadable answer too, then a
``ToolError`` with its cause and a fix in plain words; the byte cap, the deadline and the
base URL from settings; the pause between calls kept; no proxy from the environment; a key
never in what a failure says."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from pydantic import ValidationError

from local2.errors import ToolError
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.settings import (
    ArxivSettings,
    ScholarlySettings,
    SemanticScholarSettings,
)
from tests.kit.scholarly_stub import FakeClock, Reply, Stub, stub

PATH = "/graph/v1/paper/search"


def client_for(server: Stub, clock: FakeClock, **api: Any) -> ApiClient:
    settings = SemanticScholarSettings(base_url=server.url("/graph/v1"), **api)
    common = ScholarlySettings(semantic_scholar=settings, retry_backoff_s=2.0, max_backoff_s=30)
    return ApiClient("semantic_scholar", "Semantic Scholar", settings, common, clock=clock)


def parse(answer: Answer) -> dict[str, Any]:
    data = json.loads(answer.body)
    if "data" not in data:
        raise Malformed("no data")
    return dict(data)


OK = Reply(b'{"data": []}')


def test_a_429_is_backed_off_by_its_retry_after_and_asked_again() -> None:
    clock = FakeClock()
    with stub({PATH: [Reply(b"{}", 429, headers={"Retry-After": "7"}), OK]}) as server:
        data, retried = client_for(server, clock, min_interval_s=0).get(
            server.url(PATH), {"query": "graphs"}, parse
        )
        assert len(server.asked(PATH)) == 2
    assert data == {"data": []}
    assert retried == ["Semantic Scholar answered 429; asked again after 7 s"]
    assert 7.0 in clock.sleeps


def test_a_second_429_fails_with_its_cause_and_a_fix() -> None:
    clock = FakeClock()
    with stub({PATH: [Reply(b"{}", 429)]}) as server:
        with pytest.raises(ToolError) as failed:
            client_for(server, clock, min_interval_s=0).get(server.url(PATH), {}, parse)
        assert len(server.asked(PATH)) == 2  # once, and once more after the backoff
    error = failed.value
    assert error.message == (
        "search failed: 429 (Semantic Scholar limits how often it is asked: try again later)"
    )
    assert error.data["cause"] == "rate_limited" and error.data["source"] == "semantic_scholar"
    assert "a key raises the limit" in error.fix and "`--sources`" in error.fix
    assert 2.0 in clock.sleeps  # no Retry-After: the settings' backoff


def test_a_5xx_twice_says_the_source_failed_on_its_side() -> None:
    down = Reply(b"oops", 503, ctype="text/plain")
    with stub({PATH: [down]}) as server, pytest.raises(ToolError) as failed:
        client_for(server, FakeClock()).get(server.url(PATH), {}, parse)
    assert "503 (Semantic Scholar failed on its side)" in failed.value.message
    assert failed.value.fix.startswith("Ask again later.")


def test_an_unreadable_answer_is_asked_again_then_named() -> None:
    with stub({PATH: [Reply(b"<html>maintenance</html>"), OK]}) as server:
        data, retried = client_for(server, FakeClock()).get(server.url(PATH), {}, parse)
    assert data == {"data": []}
    assert retried[0].startswith("Semantic Scholar sent an answer that could not be read (")
    with stub({PATH: [Reply(b'{"total": 0}')]}) as server, pytest.raises(ToolError) as failed:
        client_for(server, FakeClock()).get(server.url(PATH), {}, parse)
    assert (
        failed.value.message == "Semantic Scholar sent an answer that could not be read (no data)"
    )
    assert failed.value.data["cause"] == "bad_reply" and failed.value.fix


def test_a_refusal_of_the_request_is_not_asked_again() -> None:
    with stub({PATH: [Reply(b'{"error": "bad field"}', 400)]}) as server:
        with pytest.raises(ToolError, match="400 \\(Semantic Scholar refused the request\\)"):
            client_for(server, FakeClock()).get(server.url(PATH), {}, parse)
        assert len(server.asked(PATH)) == 1


def test_an_answer_past_the_byte_cap_is_stopped_and_the_setting_named() -> None:
    big = json.dumps({"data": ["x" * 100] * 100}).encode()
    with stub({PATH: [Reply(big)]}) as server, pytest.raises(ToolError) as failed:
        client_for(server, FakeClock(), max_bytes=2048).get(server.url(PATH), {}, parse)
    assert "more than 2,048 bytes" in failed.value.message
    assert "`scholarly.semantic_scholar.max_bytes`" in failed.value.message


def test_a_slow_answer_times_out_by_the_settings_deadline() -> None:
    slow = Reply(b'{"data": []}', delay_s=1.5)
    with stub({PATH: [slow]}) as server, pytest.raises(ToolError) as failed:
        client_for(server, FakeClock(), timeout_s=0.3).get(server.url(PATH), {}, parse)
    assert failed.value.message == "search timeout after 0.3s"
    assert failed.value.data["cause"] == "timeout"


def test_nothing_listening_names_the_base_url_setting() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = SemanticScholarSettings(base_url=f"http://127.0.0.1:{port}/graph/v1")
    client = ApiClient("semantic_scholar", "Semantic Scholar", settings, ScholarlySettings())
    with pytest.raises(ToolError) as failed:
        client.get(f"http://127.0.0.1:{port}/graph/v1/paper/search", {}, parse)
    assert "the connection was refused" in failed.value.message
    assert failed.value.data["cause"] == "refused"
    assert f"`scholarly.semantic_scholar.base_url` (http://127.0.0.1:{port}/graph/v1)" in (
        failed.value.fix
    )


def test_a_base_url_that_is_not_http_is_refused_with_the_settings() -> None:
    with pytest.raises(ValidationError, match="base_url must start with http:// or https://"):
        ArxivSettings(base_url="export.arxiv.org/api/query")
    with pytest.raises(ValidationError):
        ArxivSettings(min_interval_s=1.0)  # arXiv's terms: one call every three seconds


def test_calls_to_one_host_keep_the_pause_between_them() -> None:
    clock = FakeClock()
    with stub({PATH: [OK]}) as server:
        client = client_for(server, clock, min_interval_s=1.5)
        for _ in range(3):
            client.get(server.url(PATH), {}, parse)
    assert clock.sleeps == [1.5, 1.5]  # none before the first


def test_no_proxy_is_taken_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9/")  # nothing is there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with stub({PATH: [OK]}) as server:
        data, _ = client_for(server, FakeClock()).get(server.url(PATH), {}, parse)
        assert len(server.asked(PATH)) == 1
    assert data == {"data": []}


def test_a_key_is_never_in_what_a_failure_says() -> None:
    secret = "sk-live-abc123"
    echo = json.dumps({"message": f"key {secret} not valid"}).encode()
    with stub({PATH: [Reply(echo)]}) as server:
        client = client_for(server, FakeClock())
        client.secrets = (secret,)
        with pytest.raises(ToolError) as failed:

            def parse_echo(answer: Answer) -> None:
                raise Malformed(json.loads(answer.body)["message"])

            client.get(server.url(PATH), {"api_key": secret}, parse_echo)
    said = " ".join([failed.value.message, failed.value.fix, json.dumps(failed.value.data)])
    assert secret not in said and "key *** not valid" in failed.value.message
