"""Watches in a real ``local2 serve`` (issue 57): its scheduler runs a seconds-scale watch as
ordinary research runs (the real ChatOllama against the test kit's Ollama-protocol server,
SearXNG and web_fetch on a loopback web whose pages change), the second run tells exactly the
new source and the changed claim, and feedparser reads the person's Atom feed; all through
real httpx on loopback. On a team server, each person's watches, notices and feed are their
own (404 for another's, as for an unknown one), the feed opens by its token in the query, a
token voided opens nothing, and the token is in no log line; bad input is 422 with an
example and nothing is kept.
"""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import feedparser
import httpx
import pytest
import yaml

from local2.storage import open_people
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, research_overrides
from local2_testkit.serve_process import ServeProcess, serve_processes
from tests.conftest import make_settings
from tests.watch.test_watch_runner import BATTERY, GRID, PLANT, PLANT_AFTER, QUESTION

EVERY = "every 15 seconds"


def write_config(directory: Path, sections: dict[str, dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for section, values in sections.items():
        (directory / f"{section}.yaml").write_text(yaml.safe_dump(values))
    return directory


def research_config(directory: Path, fake: FakeOllama, web: LoopbackWeb) -> Path:
    sections: dict[str, dict[str, Any]] = research_overrides(web, "unused")
    sections["system"] = {"ollama_host": fake.url}
    sections["generator"] = {"backend": "ollama"}
    sections["memory"] = {"enabled": False}
    sections["research"].update(max_rounds=1)
    sections["watch"] = {"minimum_interval_s": 0, "look_every_s": 1, "run_retry_wait_s": 0.1}
    return write_config(directory, sections)


def finished_runs(client: httpx.Client, url: str, watch_id: str) -> list[dict[str, Any]]:
    shown = client.get(f"{url}/watches/{watch_id}")
    assert shown.status_code == 200, shown.text
    return [r for r in shown.json()["runs"] if r["status"] != "running"]


def wait_for_runs(
    client: httpx.Client, url: str, watch_id: str, count: int, timeout_s: float = 240
) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = finished_runs(client, url, watch_id)
        if len(runs) >= count:
            return runs
        time.sleep(0.5)
    raise AssertionError(f"{count} runs not finished in {timeout_s}s: {runs}")


def test_the_scheduler_in_serve_runs_a_watch_and_tells_what_changed(tmp_path: Path) -> None:
    with (
        LoopbackWeb([PLANT, GRID]) as web,
        FakeOllama(ResearchBrain()) as fake,
        ServeProcess(
            research_config(tmp_path / "conf", fake, web),
            env={"LOCAL2_HOME": str(tmp_path / "data")},
        ) as api,
        httpx.Client(timeout=60) as client,
    ):
        added = client.post(f"{api.url}/watches", json={"question": QUESTION, "schedule": EVERY})
        assert added.status_code == 201, added.text
        watch = added.json()
        wid = watch["watch_id"]
        assert client.get(f"{api.url}/watches").json()["watches"] == [watch]
        # Nothing asks the server to run it: its scheduler does, at the due time.
        [first] = wait_for_runs(client, api.url, wid, 1)
        assert first["due"] == watch["next_due"] and first["status"] == "done", first
        paused = client.post(f"{api.url}/watches/{wid}/pause").json()
        assert paused["paused"] and paused["next_due"] is None
        ran = finished_runs(client, api.url, wid)  # a due time claimed before the pause, done
        web.pages = {p.name: p for p in (PLANT_AFTER, GRID, BATTERY)}
        resumed_at = time.time()
        resumed = client.post(f"{api.url}/watches/{wid}/resume").json()
        assert not resumed["paused"] and resumed["next_due"] > resumed_at
        runs = wait_for_runs(client, api.url, wid, len(ran) + 1)
        client.post(f"{api.url}/watches/{wid}/pause")
        payload = client.get(f"{api.url}/research/{runs[0]['run_id']}").json()
        feed_text = client.get(f"{api.url}/watches/feed")
        notices = client.get(f"{api.url}/watches/notices", params={"unread": True}).json()
        log = api.log()
        battery = web.page_url("kestrel-battery")

    # The first run found everything new; the one after the pages changed, exactly the new
    # source and the changed claim, and it is an ordinary research run, opened by its id.
    assert first["changes"]["first_run"] and len(first["changes"]["new_sources"]) == 2
    latest = runs[0]
    assert latest["due"] == resumed["next_due"] and latest["status"] == "done", latest
    changes = latest["changes"]
    assert [s["url"] for s in changes["new_sources"]] == [battery]
    [revised] = changes["revised_claims"]
    assert "40 MW" in revised["before"]["claim"] and "55 MW" in revised["after"]["claim"]
    assert payload["status"] == "done" and "55 MW" in payload["report"]
    # Told in the notices (unread) and the Atom feed, newest first, read by feedparser.
    assert feed_text.status_code == 200, feed_text.text
    assert feed_text.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(feed_text.content)
    assert not feed.bozo, feed.bozo_exception
    titles = [entry.title for entry in feed.entries]
    assert titles == [n["title"] for n in notices["notices"]] and len(titles) >= 2
    assert "1 new source" in titles[0] and "1 revised claim" in titles[0]
    assert feed.entries[0].link == f"{api.url}/research/{latest['run_id']}"
    assert "Traceback" not in log, log


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[ServeProcess, dict[str, str]]]:
    """A server beyond nobody: alice and bob added while it runs, each with a token."""
    config = write_config(tmp_path / "conf", {"watch": {"minimum_interval_s": 3600}})
    home = tmp_path / "data"
    with ServeProcess(config, env={"LOCAL2_HOME": str(home)}) as api:
        with closing(open_people(make_settings(tmp_path))) as people:  # type: ignore[type-var]
            tokens = {name: people.add(name) for name in ("alice", "bob")}
        yield api, tokens


def test_each_persons_watches_and_feed_are_their_own(
    team: tuple[ServeProcess, dict[str, str]],
) -> None:
    api, tokens = team
    url = api.url
    alice = httpx.Client(headers={"Authorization": f"Bearer {tokens['alice']}"}, timeout=30)
    bob = httpx.Client(headers={"Authorization": f"Bearer {tokens['bob']}"}, timeout=30)
    nobody = httpx.Client(timeout=30)
    with alice, bob, nobody:
        body = {"question": "Kestrel plant output", "schedule": "every Monday 07:00",
                "timezone": "Europe/Berlin"}  # fmt: skip
        added = alice.post(f"{url}/watches", json=body)
        assert added.status_code == 201, added.text
        wid = added.json()["watch_id"]

        # Bad input: 422 with what is wrong and an example; nothing kept.
        for bad, said in [
            ({"schedule": "61 7 * * *"}, "malformed"),
            ({"schedule": "every 10 minutes"}, "at most every 1 hour"),
            ({"timezone": "Mars/Olympus"}, "Unknown time zone"),
            ({"notify": ["nosuch://x"]}, "unknown scheme"),
        ]:
            refused = alice.post(f"{url}/watches", json={**body, **bad})
            assert refused.status_code == 422, refused.text
            detail = refused.json()["detail"]
            assert said in detail["error"], detail
            words = detail["error"] + " " + detail["fix"]
            assert "e.g." in words or "such as" in words, detail
        assert [w["watch_id"] for w in alice.get(f"{url}/watches").json()["watches"]] == [wid]

        # Bob: alice's watch is as unknown to him as one that never was.
        assert bob.get(f"{url}/watches").json() == {"watches": []}
        for method, path in [
            ("GET", f"/watches/{wid}"),
            ("POST", f"/watches/{wid}/pause"),
            ("POST", f"/watches/{wid}/resume"),
            ("DELETE", f"/watches/{wid}"),
        ]:
            theirs = bob.request(method, f"{url}{path}")
            unknown = bob.request(method, f"{url}{path.replace(wid, 'w-000000000000')}")
            assert theirs.status_code == unknown.status_code == 404, (path, theirs.text)
            assert theirs.json()["detail"].replace(wid, "?") == unknown.json()["detail"].replace(
                "w-000000000000", "?"
            )
        assert alice.get(f"{url}/watches/{wid}").json()["watch"]["paused"] is False
        assert nobody.get(f"{url}/watches").status_code == 401

        # The feed: signed in, or by the token in its address (a reader sends no header).
        assert nobody.get(f"{url}/watches/feed").status_code == 401
        assert alice.get(f"{url}/watches/feed").status_code == 200
        link = alice.get(f"{url}/watches/feed/link").json()
        assert link["url"] == f"{url}/watches/feed?token={link['token']}"
        assert alice.get(f"{url}/watches/feed/link").json() == link  # the same until renewed
        read = feedparser.parse(link["url"])  # feedparser fetches it itself
        assert read.status == 200 and not read.bozo and read.feed.title == "LoCAL2 watches of alice"
        bobs = bob.get(f"{url}/watches/feed/link").json()
        assert feedparser.parse(bobs["url"]).feed.title == "LoCAL2 watches of bob"
        # A token names its person and carries their secret: another's name with it is void.
        forged = bobs["token"].replace("bob.", "alice.", 1)
        assert nobody.get(f"{url}/watches/feed", params={"token": forged}).status_code == 401
        assert nobody.get(f"{url}/watches/feed", params={"token": "alice"}).status_code == 401
        renewed = alice.post(f"{url}/watches/feed/link").json()
        assert renewed["token"] != link["token"]
        assert nobody.get(link["url"]).status_code == 401
        assert nobody.get(renewed["url"]).status_code == 200
        # The token opens the feed alone, not the API.
        headers = {"Authorization": f"Bearer {renewed['token']}"}
        assert nobody.get(f"{url}/watches", headers=headers).status_code == 401
        assert alice.delete(f"{url}/watches/{wid}").status_code == 204
        assert alice.get(f"{url}/watches").json() == {"watches": []}
    log = api.log()
    for token in (link["token"], renewed["token"], bobs["token"]):
        assert token.split(".")[-1] not in log


def test_watch_enabled_false_leaves_due_runs_to_run_due(tmp_path: Path) -> None:
    """Off in the server: a watch falls due and nothing runs it (`local2 watch run-due`
    would); the API still adds and shows it."""
    config = write_config(
        tmp_path / "conf",
        {"watch": {"enabled": False, "minimum_interval_s": 0, "look_every_s": 0.5}},
    )
    with (
        ServeProcess(config, env={"LOCAL2_HOME": str(tmp_path / "data")}) as api,
        httpx.Client(timeout=30) as client,
    ):
        added = client.post(f"{api.url}/watches", json={"question": QUESTION, "schedule": "2s"})
        assert added.status_code == 201, added.text
        due = added.json()["next_due"]
        while time.time() < due + 5:
            time.sleep(0.5)
        shown = client.get(f"{api.url}/watches/{added.json()['watch_id']}").json()
    assert shown["runs"] == [] and shown["watch"]["next_due"] == due


def test_two_serves_on_postgres_run_each_due_time_once_as_research(
    tmp_path: Path, postgres_url: str
) -> None:
    """The multi-process claim with real research runs: two ``local2 serve`` processes on one
    Postgres (Debian's package), each with its scheduler, one watch every 15 s; each due time
    is one research run, made by one of them, and both list the same runs."""
    brain = ResearchBrain()
    with LoopbackWeb([PLANT, GRID]) as web, FakeOllama(brain) as fake:
        config = research_config(tmp_path / "conf", fake, web)
        (config / "system.yaml").write_text(
            yaml.safe_dump({"ollama_host": fake.url, "checkpointer": "postgres"})
        )
        env = {"LOCAL2_POSTGRES_URL": postgres_url}
        homes = [tmp_path / "a", tmp_path / "b"]
        with serve_processes(config, env, homes) as (a, b), httpx.Client(timeout=60) as client:
            added = client.post(f"{a.url}/watches", json={"question": QUESTION, "schedule": EVERY})
            assert added.status_code == 201, added.text
            wid = added.json()["watch_id"]
            wait_for_runs(client, b.url, wid, 3, timeout_s=300)
            client.post(f"{b.url}/watches/{wid}/pause")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # a run claimed before the pause, let finish
                shown = client.get(f"{a.url}/watches/{wid}").json()["runs"]
                if all(r["status"] != "running" for r in shown):
                    break
                time.sleep(0.5)
            research = [
                client.get(f"{s.url}/research", params={"limit": 100}).json() for s in (a, b)
            ]
            logs = a.log() + b.log()
    assert len(shown) >= 3 and all(r["status"] == "done" for r in shown), shown
    dues = [r["due"] for r in shown]
    assert len(set(dues)) == len(dues)  # each due time once
    assert all(b - a >= 15 for a, b in itertools.pairwise(sorted(dues)))
    run_ids = sorted(r["run_id"] for r in shown)
    assert brain.requests["compose"] == len(shown)  # one report written per due time
    for listed in research:  # one research run per due time, the same seen from both
        assert sorted(r["run_id"] for r in listed["runs"]) == run_ids, listed
    assert "Traceback" not in logs, logs


def test_the_scheduler_in_local2_ui_runs_a_watch_and_stops_with_it(tmp_path: Path) -> None:
    """``local2 ui`` (the real Gradio app and the API on one loopback server) runs the
    scheduler as ``serve`` does: a seconds-scale watch added through its API runs at its due
    time; stopped (SIGTERM, as systemd or ``kill`` stops it), the process ends promptly and
    no run starts after it is gone: its next due time comes and stays unclaimed."""
    home = tmp_path / "data"
    with (
        LoopbackWeb([PLANT, GRID]) as web,
        FakeOllama(ResearchBrain()) as fake,
        httpx.Client(timeout=60) as client,
    ):
        config = research_config(tmp_path / "conf", fake, web)
        (config / "system.yaml").write_text(
            yaml.safe_dump({"ollama_host": fake.url, "log_level": "INFO"})
        )
        app = ServeProcess(config, env={"LOCAL2_HOME": str(home)}, command="ui")
        with app:
            page = client.get(f"{app.url}/")
            assert page.status_code == 200 and "gradio" in page.text.lower(), page.text[:300]
            added = client.post(
                f"{app.url}/watches", json={"question": QUESTION, "schedule": "every 5 seconds"}
            )
            assert added.status_code == 201, added.text
            watch = added.json()
            [first, *_] = wait_for_runs(client, app.url, watch["watch_id"], 1)[::-1]
            ended_at = time.time()
            status = app.end()
            log = app.log(tail=None)
        # The run happened at its due time, as an ordinary research run.
        assert first["due"] == watch["next_due"] and first["status"] == "done", first
        assert first["changes"]["first_run"] and len(first["changes"]["new_sources"]) == 2
        # Stopped promptly by SIGTERM (not killed past its grace): uvicorn shuts the server
        # down and raises the signal again, which ends the process, its scheduler with it.
        assert status == -signal.SIGTERM and time.time() - ended_at < 20, (status, log[-3000:])
        assert "watches: the scheduler runs in this process" in log, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
        from local2.storage import SqliteWatchStore

        store = SqliteWatchStore(home / "watches.sqlite")
        try:
            after_exit = store.runs(watch["watch_id"], 100)
            time.sleep(7)  # past the next due time: nothing runs it any more
            later = store.runs(watch["watch_id"], 100)
            row = store.get(watch["watch_id"])
        finally:
            store.close()
    assert later == after_exit and all(r["started_at"] < ended_at + 1 for r in later), later
    assert row is not None and row["next_due"] is not None and row["next_due"] < time.time()
