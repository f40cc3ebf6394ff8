"""A watch's runs end to end, through the real parts: ordinary research runs (the real
ChatOllama against the test kit's Ollama-protocol server, SearXNG and web_fetch against a
loopback web whose pages change between runs, the real SQLite checkpointer), what changed
against the last run, "nothing new", notices to a loopback webhook through Apprise, a failed
run retried, and no Apprise secret in any log, view or run. A run after the first looks
first at what appeared since the last one: its first round's searches carry SearXNG's
``time_range``, the report says so, and a source of last time it did not look for is not
called gone (its claims not "no longer supported"); a later round searches any date."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from local2.config import load_settings
from local2.contracts import LOCAL, Person
from local2.errors import UnknownWatch
from local2.ports import free_port
from local2.service import Research, WatchDesk, open_watch_desk
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, Page, research_overrides

QUESTION = "What is the state of the Kestrel solar plant?"
SECRET = "hunter2-s3cret-token"
HOUR = 3600.0


def page(name: str, title: str, *sentences: str) -> Page:
    body = "".join(f"<p>{s}</p>" for s in sentences)
    html = (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}</article></body></html>"
    )
    return Page(name, title, html, " ".join(sentences))


PLANT = page(
    "kestrel-plant",
    "Kestrel solar plant output",
    "The Kestrel solar plant produces 40 MW of power for the region.",
    "Engineers at the Kestrel solar plant check its panels every week.",
)
PLANT_AFTER = page(
    "kestrel-plant",
    "Kestrel solar plant output",
    "The Kestrel solar plant produces 55 MW of power for the region.",
    "Engineers at the Kestrel solar plant check its panels every week.",
)
GRID = page(
    "kestrel-grid",
    "Kestrel solar plant grid link",
    "The Kestrel solar plant feeds the Northern grid through two power lines.",
    "The grid operator of the Kestrel solar plant publishes its load each month.",
)
BATTERY = page(
    "kestrel-battery",
    "Kestrel solar plant batteries",
    "The Kestrel solar plant added a battery bank of 12 MWh in March.",
    "The batteries of the Kestrel solar plant store power for the evening.",
)


class Hook:
    """A webhook on loopback: the notices Apprise posted, and the logins they carried."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.logins: list[str] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.bodies.append(json.loads(body))
                auth = self.headers.get("Authorization", "")
                hook.logins.append(base64.b64decode(auth.split(" ", 1)[-1]).decode())
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://alice:{SECRET}@127.0.0.1:{self.port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    served = Hook()
    yield served
    served.close()


@pytest.fixture
def web() -> Iterator[LoopbackWeb]:
    with LoopbackWeb([PLANT, GRID]) as served:
        yield served


class FailingFirst:
    """The research brain, but the first report request fails (the server answers 500)."""

    def __init__(self, brain: ResearchBrain) -> None:
        self.brain = brain
        self.failed = 0

    def __call__(self, request: dict[str, Any]) -> Any:
        if self.failed == 0 and not request.get("format") and "Sources:" in str(request):
            self.failed += 1
            raise RuntimeError("the model server fell over")
        return self.brain(request)


def opened(fake: FakeOllama, web: LoopbackWeb, tmp_path: Path) -> tuple[Research, WatchDesk]:
    overrides: dict[str, Any] = research_overrides(web, tmp_path / "data")
    overrides["system"]["ollama_host"] = fake.url
    overrides["generator"] = {"backend": "ollama"}
    overrides["memory"] = {"enabled": False}
    overrides["research"].update(max_rounds=1)
    overrides["watch"] = {
        "run_retry_wait_s": 0.05,
        "delivery_wait_s": 0.05,
        "minimum_interval_s": 60,
    }
    settings = load_settings(overrides=overrides)
    return Research(settings, backend="ollama"), open_watch_desk(settings)


def test_three_runs_report_the_new_source_and_the_changed_claim_then_nothing_new(
    web: LoopbackWeb, hook: Hook, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    failing = FailingFirst(ResearchBrain())
    with FakeOllama(failing) as fake:
        research, desk = opened(fake, web, tmp_path)
        watch = desk.add(
            LOCAL, QUESTION, "every 1 hour", timezone="Europe/Berlin", targets=[hook.url]
        )
        assert watch["next_due"] is not None
        first = desk.run_due(research, now=watch["next_due"] + 1)
        web.pages = {p.name: p for p in (PLANT_AFTER, GRID, BATTERY)}
        second = desk.run_due(research, now=watch["next_due"] + HOUR + 1)
        third = desk.run_due(research, now=watch["next_due"] + 2 * HOUR + 1)
        shown = desk.show(LOCAL, watch["watch_id"])
        payloads = [research.payload(r[0]["run_id"]) for r in (first, second, third)]
        notices = desk.notices(LOCAL)
        research.close()
        desk.close()

    # Each due time ran once, as an ordinary research run of its own, done.
    assert [len(r) for r in (first, second, third)] == [1, 1, 1]
    assert [p["status"] for p in payloads] == ["done", "done", "done"]
    assert [p["run_id"] for p in payloads] == [r[0]["run_id"] for r in (first, second, third)]
    assert all(r[0]["status"] == "done" for r in (first, second, third))
    # The first run failed once (the model server), was tried again and finished.
    assert failing.failed == 1 and failing.brain.requests["compose"] == 3
    assert first[0]["changes"] is not None and first[0]["changes"]["first_run"]
    assert {s["url"] for s in first[0]["changes"]["new_sources"]} == {
        web.page_url("kestrel-plant"),
        web.page_url("kestrel-grid"),
    }

    changed = second[0]["changes"]
    assert changed is not None and not changed["nothing_new"] and not changed["first_run"]
    assert [s["url"] for s in changed["new_sources"]] == [web.page_url("kestrel-battery")]
    assert [c["claim"] for c in changed["new_claims"]] == [
        "The Kestrel solar plant added a battery bank of 12 MWh in March."
    ]
    [revised] = changed["revised_claims"]
    assert "40 MW" in revised["before"]["claim"] and "55 MW" in revised["after"]["claim"]
    assert changed["sources_gone"] == [] and changed["no_longer_supported"] == []

    assert third[0]["nothing_new"] is True and third[0]["changes"] is not None
    assert third[0]["changes"]["new_sources"] == [] and third[0]["changes"]["revised_claims"] == []

    # Told twice (the first run, the change), not of "nothing new" (notify_on: changes).
    assert len(notices) == 2 and all(n["unread"] for n in notices)
    assert "1 new source" in notices[0]["title"] and "1 revised claim" in notices[0]["title"]
    assert len(hook.bodies) == 2 and "55 MW" in hook.bodies[1]["message"]
    assert hook.logins == [f"alice:{SECRET}"] * 2  # the secret went where it belongs
    assert [d["ok"] for d in shown["deliveries"]] == [True, True]
    assert [r["nothing_new"] for r in shown["runs"]] == [True, False, False]

    # ... and nowhere else: not in a log line, a view, a notice or a run's payload.
    assert SECRET in hook.url
    assert SECRET not in caplog.text
    for seen in (watch, shown, notices, payloads):
        assert SECRET not in json.dumps(seen)
    [target] = shown["watch"]["targets"]
    assert target.startswith(f"json://alice:****@127.0.0.1:{hook.port}/hook?")


def test_another_persons_watch_is_as_unknown_as_none(web: LoopbackWeb, tmp_path: Path) -> None:
    alice, bob = Person("alice"), Person("bob")
    with FakeOllama(ResearchBrain()) as fake:
        research, desk = opened(fake, web, tmp_path)
        watch = desk.add(alice, QUESTION, "every day at 07:00")
        for act in (desk.show, desk.pause, desk.resume, desk.remove):
            with pytest.raises(UnknownWatch) as caught:
                act(bob, watch["watch_id"])
            assert caught.value.message == f"No watch {watch['watch_id']!r} among yours."
        with pytest.raises(UnknownWatch):
            desk.run_now(bob, watch["watch_id"], research)
        assert desk.watches(bob) == [] and desk.notices(bob) == []
        assert [w["watch_id"] for w in desk.watches(alice)] == [watch["watch_id"]]
        assert desk.show(alice, watch["watch_id"])["runs"] == []  # bob's tries ran nothing
        research.close()
        desk.close()


def dated(page: Page, day: date) -> Page:
    return dataclasses.replace(page, published=day)


OLD = date.today() - timedelta(days=90)  # long before any run of these tests


def since_of(desk: WatchDesk, watch_id: str) -> str:
    """The day the watch's latest finished run started, in its time zone (Europe/Berlin)."""
    [run] = [r for r in desk.show(LOCAL, watch_id)["runs"] if r["status"] == "done"][:1]
    return datetime.fromtimestamp(run["started_at"], ZoneInfo("Europe/Berlin")).date().isoformat()


def test_a_later_run_looks_first_at_what_appeared_since_the_last_one(
    hook: Hook, tmp_path: Path
) -> None:
    with (
        LoopbackWeb([dated(PLANT, OLD), dated(GRID, OLD)]) as web,
        FakeOllama(ResearchBrain()) as fake,
    ):
        research, desk = opened(fake, web, tmp_path)
        watch = desk.add(
            LOCAL, QUESTION, "every 1 hour", timezone="Europe/Berlin", targets=[hook.url]
        )
        assert watch["next_due"] is not None
        [first] = desk.run_due(research, now=watch["next_due"] + 1)
        since = since_of(desk, watch["watch_id"])
        searched_first = web.search_params()
        # The plant's page is updated today, a battery page appears; the grid page is as old.
        today = date.today()
        web.pages = {
            p.name: p for p in (dated(PLANT_AFTER, today), dated(GRID, OLD), dated(BATTERY, today))
        }
        served_before = len(web.pages_served())
        [second] = desk.run_due(research, now=watch["next_due"] + HOUR + 1)
        searched_second = web.search_params()[len(searched_first) :]
        read_second = web.pages_served()[served_before:]
        payload = research.payload(second["run_id"])
        notices = desk.notices(LOCAL)
        battery, grid = web.page_url("kestrel-battery"), web.page_url("kestrel-grid")
        research.close()
        desk.close()

    # The first run looked at any date; the second asked the engine for what is recent
    # (SearXNG's own filter: since is today, so the last day), in every search it made.
    assert first["status"] == second["status"] == "done"
    assert searched_first and all("time_range" not in p for p in searched_first), searched_first
    assert first["changes"] is not None and first["changes"].get("looked_first_since") is None
    assert searched_second and all(p.get("time_range") == "day" for p in searched_second)
    assert "kestrel-grid" not in read_second  # the old page was not found, so not read
    # The report says the run's scope, and the payload keeps it.
    assert payload["scope"] is not None and payload["scope"]["first_round_since"] == since
    said = f"The first round looks only at sources published on or after {since}."
    assert payload["scope"]["said"] == said
    assert f"_Scope: {said}" in payload["report"]
    # What changed: exactly the new source and the changed claim; the grid page, not looked
    # at this time, is not gone, and its claims are not "no longer supported".
    changed = second["changes"]
    assert changed is not None and not changed["nothing_new"]
    assert [s["url"] for s in changed["new_sources"]] == [battery]
    assert [c["claim"] for c in changed["new_claims"]] == [
        "The Kestrel solar plant added a battery bank of 12 MWh in March."
    ]
    [revised] = changed["revised_claims"]
    assert "40 MW" in revised["before"]["claim"] and "55 MW" in revised["after"]["claim"]
    assert changed["sources_gone"] == [] and changed["no_longer_supported"] == []
    assert changed.get("looked_first_since") == since
    assert [s["url"] for s in changed.get("not_looked_at", [])] == [grid]
    # ... and the notice says it looked first at what appeared since that day.
    assert "source gone" not in notices[0]["title"] and "no longer" not in notices[0]["title"]
    assert f"It looked first at what appeared since {since}." in notices[0]["body"]
    assert f"It looked first at what appeared since {since}." in hook.bodies[-1]["message"]


def test_a_later_round_of_a_watch_run_searches_any_date(tmp_path: Path) -> None:
    """The look-first day holds for the first round alone: the run's second round (a gap the
    model named) searches without it and finds last time's grid page again, so it is
    neither gone nor "not looked at"."""
    brain = ResearchBrain(gaps=[[], ["Kestrel solar plant grid link power lines"]])
    with (
        LoopbackWeb([dated(PLANT, OLD), dated(GRID, OLD)]) as web,
        FakeOllama(brain) as fake,
    ):
        research, desk = opened(fake, web, tmp_path)
        watch = desk.add(LOCAL, QUESTION, "every 1 hour", timezone="Europe/Berlin", max_rounds=2)
        assert watch["next_due"] is not None
        desk.run_due(research, now=watch["next_due"] + 1)
        asked_before = len(web.search_params())
        today = date.today()
        web.pages = {
            p.name: p for p in (dated(PLANT_AFTER, today), dated(GRID, OLD), dated(BATTERY, today))
        }
        [second] = desk.run_due(research, now=watch["next_due"] + HOUR + 1)
        searched = web.search_params()[asked_before:]
        payload = research.payload(second["run_id"])
        battery, grid = web.page_url("kestrel-battery"), web.page_url("kestrel-grid")
        research.close()
        desk.close()

    rounds = sorted({s["round"] for s in payload["steps"] if s["calls"]})
    assert rounds == [1, 2], payload["steps"]
    assert [p.get("time_range") for p in searched] == ["day", None], searched
    changed = second["changes"]
    assert changed is not None and changed.get("looked_first_since") is not None
    assert [s["url"] for s in changed["new_sources"]] == [battery]
    assert changed["sources_gone"] == [] and changed.get("not_looked_at") == []
    assert grid in {s["url"] for s in payload["sources"]}
