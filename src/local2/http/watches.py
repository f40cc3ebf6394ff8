"""Watches over HTTP (docs/watch.md): a research question on a schedule, told what changed.

``GET /watches`` lists the caller's watches, ``POST /watches`` adds one (checked whole
first: a bad schedule, time zone or Apprise URL is 422 with ``{error, fix}``, the fix an
example, and nothing is kept), ``GET /watches/{id}`` shows one with its latest runs and
delivery attempts, ``POST /watches/{id}/pause`` and ``/resume``, ``DELETE /watches/{id}``.
Another person's watch answers 404, as an unknown one does. Apprise targets go out
redacted only.

``GET /watches/notices`` lists the caller's notices (``?unread=true``), ``POST
/watches/notices/read`` marks some read. ``GET /watches/feed`` is the caller's Atom feed. A
feed reader cannot easily send a header, so the feed also opens with the token of
``GET /watches/feed/link`` in its query (``?token=...``): that token opens this person's
feed and nothing else, and ``POST /watches/feed/link`` makes a new one, voiding the old.
The server keeps no access log, so the token is in no log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from local2.contracts import LOCAL, NoticeView, Person, WatchDetail, WatchView
from local2.errors import InvalidInput
from local2.http.identity import Caller, person_of
from local2.http.openapi import returns
from local2.service import FEED_PATH, Agent, Identify

ATOM = "application/atom+xml; charset=utf-8"
T = TypeVar("T")


class WatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(description="What to research each time.")
    schedule: str = Field(
        description='When: "every Monday 07:00", "every 6 hours", "30m" or a cron line '
        '("0 7 * * mon").',
        examples=["every Monday 07:00"],
    )
    timezone: str | None = Field(
        default=None, description="An IANA time zone (null: watch.timezone).", examples=["UTC"]
    )
    notify: list[str] = Field(
        default_factory=list,
        description="Apprise URLs to tell (mailto://, ntfy://, json://...), each checked now.",
    )
    notify_on: Literal["changes", "always", "never"] = "changes"
    max_rounds: int | None = Field(default=None, ge=1, le=10)
    sources: Literal["web", "library", "both"] = "web"
    keep: Literal["all", "research", "off"] | None = None
    since: str | None = Field(
        default=None,
        description="Every run: only sources published on or after 2024-03-05, 2024-03, 2024 "
        "or 'past week|month|year' (counted from each run). Each run after the first also "
        "looks first at what appeared since the last one.",
    )
    until: str | None = Field(
        default=None, description="Every run: only sources published on or before (a date)."
    )
    domains: list[str] | None = Field(default=None, description="Only sources on these hosts.")
    exclude_domains: list[str] | None = Field(
        default=None, description="Never sources on these hosts."
    )


class ReadBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    notice_ids: list[str]


class Watches(TypedDict):
    """``GET /watches``: the caller's watches, the oldest first."""

    watches: list[WatchView]


class Notices(TypedDict):
    """``GET /watches/notices``: the caller's notices, newest first."""

    notices: list[NoticeView]


class FeedLink(TypedDict):
    """Where a feed reader reads the caller's feed: the address with its token."""

    url: str
    token: str


def refused(call: Callable[[], T]) -> T:
    """``call``'s result; bad input as 422 ``{error, fix}`` (the fix holds an example)."""
    try:
        return call()
    except InvalidInput as exc:
        raise HTTPException(422, detail={"error": exc.message, "fix": exc.fix}) from exc


def watch_routes(agent: Agent) -> APIRouter:
    """The caller's watches and notices (behind the API's sign-in, as every route)."""
    router = APIRouter(tags=["watches"])

    @router.get("/watches", **returns(Watches))
    def list_watches(person: Caller) -> Watches:
        return {"watches": agent.watches.watches(person)}

    @router.post("/watches", status_code=201, **returns(WatchView, "The watch added."))
    def add_watch(body: WatchBody, person: Caller) -> WatchView:
        return refused(
            lambda: agent.watches.add(
                person,
                body.question,
                body.schedule,
                timezone=body.timezone,
                targets=body.notify,
                notify_on=body.notify_on,
                max_rounds=body.max_rounds,
                sources=body.sources,
                keep=body.keep,
                scope=body.model_dump(include={"since", "until", "domains", "exclude_domains"}),
            )
        )

    @router.get("/watches/notices", **returns(Notices))
    def notices(
        person: Caller, unread: bool = False, limit: Annotated[int, Query(ge=1, le=500)] = 50
    ) -> Notices:
        return {"notices": agent.watches.notices(person, unread=unread, limit=limit)}

    @router.post("/watches/notices/read", status_code=204)
    def mark_read(body: ReadBody, person: Caller) -> Response:
        agent.watches.mark_read(person, body.notice_ids)
        return Response(status_code=204)

    @router.get("/watches/feed/link", **returns(FeedLink))
    def feed_link(request: Request, person: Caller) -> FeedLink:
        return _link(request, refused(lambda: agent.watches.feed.token(person)))

    @router.post("/watches/feed/link", **returns(FeedLink, "A new link; the old one is void."))
    def renew_feed_link(request: Request, person: Caller) -> FeedLink:
        return _link(request, agent.watches.feed.renew(person))

    @router.get("/watches/{watch_id}", **returns(WatchDetail))
    def show(
        watch_id: str, person: Caller, limit: Annotated[int, Query(ge=1, le=200)] = 20
    ) -> WatchDetail:
        return agent.watches.show(person, watch_id, limit)

    @router.post("/watches/{watch_id}/pause", **returns(WatchView))
    def pause(watch_id: str, person: Caller) -> WatchView:
        return agent.watches.pause(person, watch_id)

    @router.post("/watches/{watch_id}/resume", **returns(WatchView))
    def resume(watch_id: str, person: Caller) -> WatchView:
        return agent.watches.resume(person, watch_id)

    @router.delete("/watches/{watch_id}", status_code=204)
    def remove(watch_id: str, person: Caller) -> Response:
        agent.watches.remove(person, watch_id)
        return Response(status_code=204)

    return router


def feed_routes(agent: Agent, who: Identify) -> APIRouter:
    """``GET /watches/feed``: signed in as any route, or by the feed token in its query."""
    router = APIRouter(tags=["watches"])

    @router.get(
        FEED_PATH,
        response_class=Response,
        responses={200: {"content": {"application/atom+xml": {}}}, 401: {}},
    )
    def feed(request: Request, token: str | None = None) -> Response:
        person = _feed_reader(agent, who, request, token)
        body = agent.watches.feed.document(person, base_url=str(request.base_url))
        return Response(body, media_type=ATOM, headers={"Cache-Control": "private, no-store"})

    return router


def _feed_reader(agent: Agent, who: Identify, request: Request, token: str | None) -> Person:
    """Whose feed: the feed token's holder (still someone here), else whoever signs in."""
    if not token:
        return person_of(who, request)  # 401 as any route when no one is signed in
    name = agent.watches.feed.holder(token)
    if name == LOCAL.name:
        return LOCAL
    person = agent.access.named(name) if name else None
    if person is None and name and who.user_header:  # names come from the proxy here
        person = Person(name)
    if person is None:  # unknown, voided, or its person removed since
        raise HTTPException(
            401,
            detail="This feed link is not valid (any more). Get its current address from "
            "GET /watches/feed/link or the app's Watches tab.",
        )
    return person


def _link(request: Request, token: str) -> FeedLink:
    base = str(request.base_url).rstrip("/")
    return {"url": f"{base}{FEED_PATH}?token={token}", "token": token}
