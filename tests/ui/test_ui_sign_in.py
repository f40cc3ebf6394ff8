"""Signing in to the app (local2.ui._sign_in): the login check, the trusted proxy's name, the
person each handler acts for, and the real server turning its login page on as people are
added by another process (uvicorn + httpx, the people in the agent's own SQLite store); an
old sign-in signed out for good when its person is removed and added again or rotated (two
apps on one store, through Gradio's own endpoints); and a research report's file, from a
real ``local2 serve``, kept where only the server's user reads it."""

from __future__ import annotations

import asyncio
import inspect
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import yaml
from starlette.requests import Request

from local2.contracts._people import LOCAL, Person
from local2.http._identity import StripUntrustedUser
from local2.memory._owners import owner_folder
from local2.models._scripted import ScriptedChatModel, reply
from local2.server import create_app
from local2.service import Guard, Identify, networks
from local2.service.access import Access
from local2.service.agent import Agent
from local2.storage._open import open_people
from local2.ui._sign_in import SignedOut, SignIn, person_of, proxied_user
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from local2_testkit.serve_process import ServeProcess
from tests.kit.app_calls import call_handler
from tests.kit.browser import app_served
from tests.kit.helpers import bearer_clients, make_settings
from tests.kit.served import Served

HEADER = "X-Forwarded-User"
CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
SECRET = "My locker code is 4711."


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Agent]:
    yield from agent_with(tmp_path)


def agent_with(tmp_path: Path, **server: Any) -> Iterator[Agent]:
    settings = make_settings(tmp_path, **({"server": server} if server else {}))
    model = ScriptedChatModel(replies=[reply("fine")], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    yield agent
    agent.close()


def people_of(agent: Agent) -> Any:
    """The same people store as the agent's, opened apart: as `local2 users add` would, from
    another process, while the server runs."""
    return open_people(agent.settings)


def signed(name: str | None) -> Any:
    return SimpleNamespace(username=name)  # what a gr.Request carries of the sign-in


def test_nobody_configured_the_single_token_signs_in_under_any_name(agent: Agent) -> None:
    on_loopback = SignIn(agent.access)
    assert not on_loopback.needed(configured=False)  # loopback: nothing asked, as always
    assert not on_loopback.check("anyone", "")  # and no password opens anything
    beyond = SignIn(agent.access, token="s3cret", guard=Guard(loopback=False))
    assert beyond.needed(configured=False)
    assert beyond.check("whoever", "s3cret")
    assert not beyond.check("whoever", "s3cre")
    assert not beyond.check("whoever", "")
    assert SignIn(agent.access, guard=Guard(loopback=False)).needed(configured=False)
    assert not SignIn(agent.access, guard=Guard(loopback=False)).check("x", "")


def test_people_sign_in_with_their_own_name_and_token(agent: Agent) -> None:
    store = people_of(agent)
    alice, bob = store.add("alice"), store.add("bob")
    sign_in = SignIn(agent.access, token="s3cret")
    assert sign_in.check("alice", alice)
    assert sign_in.check(" Alice ", alice)  # names are lower-case; the form may not be
    assert not sign_in.check("bob", alice)  # a token signs in its own person only
    assert not sign_in.check("alice", bob)
    assert not sign_in.check("alice", alice[:-1])
    assert not sign_in.check("alice", "")
    assert not sign_in.check("carol", alice)
    assert not sign_in.check("alice", "s3cret")  # the single token is local's, not alice's
    assert sign_in.check("local", "s3cret")
    assert not sign_in.check("local", alice)
    assert not sign_in.check("whoever", "s3cret")  # with people, the name must be right
    assert SignIn(agent.access).needed(configured=True)  # loopback too, once people exist
    new = store.rotate("alice")
    assert not sign_in.check("alice", alice) and sign_in.check("alice", new)
    store.remove("alice")
    assert not sign_in.check("alice", new)


def test_login_is_a_coroutine_function_that_gradio_awaits(agent: Agent) -> None:
    """Gradio awaits ``auth`` only when it is a coroutine function; otherwise it takes the
    return value as the answer, and an un-awaited coroutine is truthy: anyone would be in."""
    bob = people_of(agent).add("bob")
    sign_in = SignIn(agent.access)
    assert inspect.iscoroutinefunction(sign_in.login)
    assert asyncio.run(sign_in.login("bob", bob)) is True
    assert asyncio.run(sign_in.login("bob", "l2_wrong")) is False


def test_each_handler_acts_for_the_signed_in_person(agent: Agent) -> None:
    access = agent.access
    # Nobody configured: always local, whatever name the single token was given with.
    assert person_of(access, False, None) == LOCAL
    assert person_of(access, False, signed(None)) == LOCAL
    assert person_of(access, False, signed("whoever")) == LOCAL
    store = people_of(agent)
    store.add("alice")
    store.add("carol", admin=True)
    assert person_of(access, False, signed("alice")) == Person("alice")
    assert person_of(access, False, signed("carol")) == Person("carol", admin=True)
    assert person_of(access, False, signed("local")) == LOCAL  # the single token, as local
    for nobody in (signed("mallory"), signed(None), None):
        with pytest.raises(SignedOut):
            person_of(access, False, nobody)
    store.remove("alice")
    with pytest.raises(SignedOut):  # removed while signed in: out at the next click
        person_of(access, False, signed("alice"))
    # From a trusted proxy the name is the proxy's word; being an admin is ours to say.
    assert person_of(access, True, signed("dave")) == Person("dave")
    assert person_of(access, True, signed("carol")) == Person("carol", admin=True)
    with pytest.raises(SignedOut):
        person_of(access, True, signed(None))


def request_from(client: str, headers: dict[str, str]) -> Request:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": (client, 50000),
        "query_string": b"",
    }
    return Request(scope)


def test_the_proxy_header_names_a_person_only_from_a_trusted_proxy(agent: Agent) -> None:
    people_of(agent).add("alice")
    identify = Identify(Access(agent.storage.people), None, HEADER, networks(["10.0.0.0/8"]))
    user = proxied_user(identify)
    name = asyncio.run(user(request_from("10.1.2.3", {HEADER: "Alice"})))
    assert name == "alice"
    assert asyncio.run(user(request_from("192.168.1.9", {HEADER: "alice"}))) is None
    assert asyncio.run(user(request_from("10.1.2.3", {}))) is None  # the proxy named no one
    token = people_of(agent).rotate("alice")  # a person's token still works without it
    bearer = {"Authorization": f"Bearer {token}"}
    assert asyncio.run(user(request_from("192.168.1.9", bearer))) == "alice"


def login(client: httpx.Client, name: str, password: str) -> httpx.Response:
    return client.post("/login", data={"username": name, "password": password})


def user_of(client: httpx.Client) -> Any:
    return client.get("/gradio_api/user").json()


def test_the_app_asks_for_a_sign_in_once_someone_is_added(agent: Agent) -> None:
    with app_served(agent) as url, httpx.Client(base_url=url, timeout=30) as browser:
        assert browser.get("/config").status_code == 200  # one person: nothing asked
        token = people_of(agent).add("alice")  # another process adds her
        assert browser.get("/config").status_code == 401
        assert login(browser, "alice", "l2_not-hers").status_code == 400
        assert login(browser, "bob", token).status_code == 400
        assert browser.get("/config").status_code == 401
        assert login(browser, "alice", token).status_code == 200
        assert browser.get("/config").status_code == 200
        assert user_of(browser) == "alice"


def test_sign_ins_from_before_people_existed_are_forgotten(agent: Agent) -> None:
    app = create_app(agent, token="s3cret", host="0.0.0.0")  # beyond loopback: it asks
    with Served(app) as url, httpx.Client(base_url=url, timeout=30) as early:
        assert early.get("/config").status_code == 401  # the single token, as always
        assert login(early, "bob", "s3cret").status_code == 200  # any name, as always
        assert user_of(early) == "bob"
        people_of(agent).add("bob")
        assert user_of(early) is None  # a name typed before names meant anything
        assert early.get("/config").status_code == 401
        assert login(early, "bob", "s3cret").status_code == 400
        assert login(early, "local", "s3cret").status_code == 200
        assert user_of(early) == "local"


@pytest.mark.parametrize("proxies, seen", [(["127.0.0.1"], "alice"), (["10.0.0.0/8"], None)])
def test_the_app_takes_the_name_from_a_trusted_proxy_only(
    tmp_path: Path, proxies: list[str], seen: str | None
) -> None:
    for agent in agent_with(tmp_path, trusted_user_header=HEADER, trusted_proxies=proxies):
        people_of(agent).add("alice")
        app = create_app(agent)
        assert any(m.cls is StripUntrustedUser for m in app.user_middleware)
        with Served(app) as url, httpx.Client(base_url=url, timeout=30) as client:
            named = {HEADER: "alice"}
            assert client.get("/gradio_api/user", headers=named).json() == seen
            assert client.get("/config", headers=named).status_code == (200 if seen else 401)
            assert client.get("/config").status_code == 401  # no name: no app
            health = client.get("/health", headers=named)  # the HTTP API agrees
            assert health.status_code == (200 if seen else 401)
            if seen:
                assert health.json()["person"] == "alice"


def test_every_app_handler_acts_for_the_signed_in_person(agent: Agent) -> None:
    """The app's handlers, called as Gradio calls them (with its ``gr.Request``): Bob gets
    nothing of Alice's session, and changes nothing in it."""
    import gradio as gr

    from local2.ui._app import LocalUI

    store = people_of(agent)
    store.add("alice")
    store.add("bob")
    alice, bob = gr.Request(username="alice"), gr.Request(username="bob")
    ui = LocalUI(agent)
    ui.build()
    done = list(ui.chat_tab.chat.respond("hello", "s-alice", [], {}, [], None, None, alice))[-1]
    assert done[ui.chat_tab.conversation.chatbot][-1].content == "fine"
    assert agent.access.session_owner("s-alice") == "alice"
    mine, ids = done[ui.state.my_sessions], done[ui.state.query_ids]
    first = agent.sessions.checkpoints("s-alice", limit=200)[-1]["checkpoint_id"]

    # Her list and her session are hers; to Bob, in the same browser, they are unknown.
    assert [c[1] for c in ui.chat_tab.sessions.on_load(mine, alice)[2]["choices"]] == ["s-alice"]
    assert ui.chat_tab.sessions.on_load(mine, bob)[2]["choices"] == []
    assert (
        "Signed in as" in ui.chat_tab.sessions.on_load(mine, bob)[5]
        and "bob" in ui.chat_tab.sessions.on_load(mine, bob)[5]
    )
    assert ui.chat_tab.sessions.resume_session("s-alice", alice)[ui.chat_tab.conversation.chatbot]
    refused = ui.chat_tab.sessions.resume_session("s-alice", bob)
    assert ui.chat_tab.conversation.chatbot not in refused and "No session s-alice here" in str(
        refused[ui.header.banner]
    )
    travel = ui.time_travel
    refused = travel.load_checkpoints("s-alice", request=bob)
    assert refused[travel.tt_turns]["data"] == [] and "No turns" in refused[travel.tt_status]
    hers = travel.load_checkpoints("s-alice", request=alice)
    assert hers[travel.tt_turns]["data"] and "hello" in hers[travel.tt_original]
    [turn_id] = hers[travel.tt_turn_ids]
    assert travel.show_turn("s-alice", turn_id, bob)[travel.tt_original] == ""
    assert travel.details.show_checkpoint("s-alice", first, bob)[travel.details.tt_state] == {}
    forked = list(travel.reruns.fork("s-alice", turn_id, "mine now", None, None, bob))
    assert "No session" in forked[-1][travel.tt_status] and travel.tt_new not in forked[-1]
    assert (
        "No session"
        in ui.chat_tab.sessions.show_current_branch("s-alice", bob)[ui.header.banner]["value"]
    )

    # Nor may he change it: no rating, replay, Stop, second attempt or turn of his in it.
    before = len(agent.sessions.checkpoints("s-alice", limit=1000))
    assert (
        "No session"
        in ui.chat_tab.ratings.rate(5, "s-alice", None, ids, [], bob)[ui.header.banner]["value"]
    )
    assert agent.sessions.history("s-alice")[0].get("reward") is None
    replayed = list(travel.reruns.replay("s-alice", turn_id, None, None, bob))
    assert "No session" in replayed[-1][travel.tt_status]
    replayed = list(travel.reruns.replay_step("s-alice", first, turn_id, None, None, bob))
    assert "No session" in replayed[-1][travel.tt_status]
    assert (
        "No session" in ui.chat_tab.approvals.stop_turn("s-alice", bob)[ui.header.banner]["value"]
    )
    retried = list(ui.chat_tab.compare_actions.retry_turn("s-alice", ids[0], [], ids, mine, bob))
    assert "No session" in retried[-1][ui.header.banner]["value"]
    asked = list(ui.chat_tab.chat.respond("mine now", "s-alice", [], {}, [], None, None, bob))
    assert "No session" in asked[-1][ui.header.banner]["value"]
    assert len(agent.sessions.checkpoints("s-alice", limit=1000)) == before
    assert ui.chat_tab.ratings.rate(5, "s-alice", None, ids, [], alice)[
        ui.chat_tab.ratings.reward_md
    ].startswith("Recorded")

    # Removed while signed in: signed out at the next click, with a way back in.
    store.remove("bob")
    gone = ui.chat_tab.sessions.resume_session("s-bob", bob)
    assert (
        "not signed in" in gone[ui.header.banner]["value"]
        and "/logout" in gone[ui.header.banner]["value"]
    )


def test_a_rotated_token_signs_that_person_out_of_the_app(agent: Agent) -> None:
    people = people_of(agent)
    alice, bob = people.add("alice"), people.add("bob")
    with (
        app_served(agent) as url,
        httpx.Client(base_url=url, timeout=30) as hers,
        httpx.Client(base_url=url, timeout=30) as his,
    ):
        assert login(hers, "alice", alice).status_code == 200
        assert login(his, "bob", bob).status_code == 200
        assert user_of(hers) == "alice" and user_of(his) == "bob"
        new = people.rotate("alice")  # in another process, as `local2 users rotate`
        assert user_of(hers) is None and hers.get("/config").status_code == 401
        assert user_of(his) == "bob"  # nobody else is signed out
        assert login(hers, "alice", alice).status_code == 400  # the old token
        assert login(hers, "alice", new).status_code == 200
        assert user_of(hers) == "alice"


def test_an_old_sign_in_never_comes_back(tmp_path: Path) -> None:
    """Removed, the list changed, one request, the same name added again: the old browser
    sign-in is signed out in both serve processes (two apps on one store), as is the old
    token; and again after a rotation. Through the app's own endpoints: who the cookie is,
    and the resume handler with her session."""
    agents = [next(agent_with(tmp_path)) for _ in range(2)]
    people = people_of(agents[0])
    tokens = {"alice": people.add("alice"), "bob": people.add("bob")}
    with (
        app_served(agents[0]) as first,
        app_served(agents[1]) as second,
        bearer_clients(first, tokens) as api,
        httpx.Client(base_url=first, timeout=30) as hers,
        httpx.Client(base_url=second, timeout=30) as hers_too,
        httpx.Client(base_url=first, timeout=30) as his,
        httpx.Client(base_url=second, timeout=30) as nobody,
    ):
        asked = api["alice"].post("/query", json={"query": SECRET, "session_id": "alice-1"})
        assert asked.status_code == 200, asked.text
        for browser in (hers, hers_too):
            assert login(browser, "alice", tokens["alice"]).status_code == 200
        assert login(his, "bob", tokens["bob"]).status_code == 200
        resumed = call_handler(hers_too, "resume_session", ["alice-1"])
        assert resumed.status == 200 and SECRET in resumed.text()  # hers, while she is here

        people.remove("alice")
        people.add("dave")  # any other change to the list
        assert his.get("/config").status_code == 200  # one request to each process
        assert nobody.get("/config").status_code == 401
        again = people.add("alice")  # the name is back, with a new token

        for old in (hers, hers_too):
            assert SECRET not in call_handler(old, "resume_session", ["alice-1"]).text()
            assert user_of(old) is None
        assert user_of(his) == "bob"  # nobody else is signed out
        assert api["alice"].get("/health").status_code == 401  # the old token
        with bearer_clients(second, {"alice": again}) as renewed:
            assert renewed["alice"].get("/health").json()["person"] == "alice"

        # Signed in again, then rotated: out at the next request, in each process.
        for browser in (hers, hers_too):
            assert login(browser, "alice", tokens["alice"]).status_code == 400
            assert login(browser, "alice", again).status_code == 200
            assert user_of(browser) == "alice"
        people.rotate("alice")
        for old in (hers, hers_too):
            assert user_of(old) is None
            assert old.get("/config").status_code == 401
            assert call_handler(old, "resume_session", ["alice-1"]).status == 401
        assert user_of(his) == "bob"
    for agent in agents:
        agent.close()


def test_a_research_report_is_kept_for_its_person_where_only_the_server_reads_it(
    tmp_path: Path,
) -> None:
    """A real ``local2 serve`` with the app: Alice runs research through the app's handler.
    Her report's file is under the data directory in a folder of hers, owned by the
    server's user, folders 0700 and the file 0600; the copy Gradio serves is under the data
    directory too, and nothing of it lands in the machine's temp folder (the server's
    TMPDIR, which also keeps the data directory out of Gradio's default allowed paths)."""
    data, machine_tmp = tmp_path / "data", tmp_path / "machine-tmp"
    machine_tmp.mkdir()
    token = open_people(make_settings(tmp_path)).add("alice")
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides = research_overrides(web, data)
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        config = tmp_path / "conf"
        config.mkdir()
        for section, values in overrides.items():
            (config / f"{section}.yaml").write_text(yaml.safe_dump(values))
        server = ServeProcess(
            config,
            env={"TMPDIR": str(machine_tmp), "LOCAL2_API_TOKEN": ""},
            ui=True,
            args=("--backend", "ollama"),
        )
        with server, httpx.Client(base_url=server.url, timeout=120) as hers:
            assert login(hers, "alice", token).status_code == 200
            # Rounds 1, no plan review, the web as sources, no other source and no scope
            # (every input of the tab's run, in order): straight to the report.
            question = "Why did Kelsby keep its bridge?"
            ran = call_handler(hers, "run", [question, 1, False, "web", [], "", "", "", ""])
            offered = [
                item["value"]
                for output in ran.outputs
                for item in output
                if isinstance(item, dict) and isinstance(item.get("value"), dict)
            ]
            assert offered, ran.text()[:2000]
            # the report's download (beside it, the references in each export format)
            served = next(f for f in reversed(offered) if str(f.get("path", "")).endswith(".md"))
            url = served["url"] if served["url"].startswith("http") else server.url + served["url"]
            downloaded = hers.get(url)

    (report,) = (data / "reports").glob("*/report-*.md")
    text = report.read_text(encoding="utf-8")
    assert "References" in text and downloaded.text == text
    assert report.parent.name == owner_folder("alice")
    for path, mode in ((data / "reports", 0o700), (report.parent, 0o700), (report, 0o600)):
        assert path.stat().st_uid == os.getuid(), path
        assert stat.S_IMODE(path.stat().st_mode) == mode, (path, oct(path.stat().st_mode))
    copy = Path(served["path"]).resolve()
    assert copy.is_relative_to((data / "cache" / "gradio").resolve())
    assert stat.S_IMODE((data / "cache" / "gradio").stat().st_mode) == 0o700
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    leaked = [
        p for p in machine_tmp.rglob("*") if p.is_file() and text in p.read_text("utf-8", "replace")
    ]
    assert leaked == [], leaked
