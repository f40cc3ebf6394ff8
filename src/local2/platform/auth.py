"""LoCAL2's people on LangGraph Server, through the platform's own custom auth.

langgraph.json names ``auth`` here (``auth.path``), so the server asks
:func:`authenticate` who every request is for and the ``@auth.on`` handlers what they may
touch; the same rules as the HTTP API (:mod:`local2.service.sign_in`), not a second mechanism:

- Who: a person's bearer token (``local2 users add``), the single ``LOCAL2_API_TOKEN``
  (local), a trusted proxy's ``server.trusted_user_header``, or, with nobody configured and
  no token set, local; anything else is 401. People are read from LoCAL2's conversation
  store (``storage.open.open_people``), opened once and kept; a SQLite store that does not
  exist yet has nobody in it and is not created here.
- Access never widens while the server runs (:class:`~local2.service.sign_in.Guard`): the
  platform's bind is not known here, so it counts as reachable from beyond this machine
  once a credential was needed (the single token set, or anyone configured at any request);
  from then on a request without a credential gets 401, with what to do, even when the
  people list empties, and local is never again "alone" (unfiltered).
- Threads (the sessions), their runs and crons carry ``metadata.owner``, set by the server
  from the person who created them (never from the request), and every read, search,
  change or run is filtered to the person's own: someone else's thread answers like an
  unknown one (404; creating one with a taken id answers 409).
- Assistants: the graph's own (``created_by: system``) may be read by everyone and changed
  by no one; assistants a person creates are theirs.
- The store: each person has a part of their own (:mod:`local2.platform.owners`); the
  namespaces they name are rewritten into it, so they read and write only their own items.
- An admin may read everyone's: a thread (its state, history, runs) of someone else's and a
  store namespace under ``("people", <name>, ...)``; each such read is written to
  ``local2_admin_reads`` (``local2 users`` shows it), as on the HTTP API. An admin's lists
  show their own, or one person's when the search names ``metadata.owner``. Writes are
  only ever one's own.
- With nobody configured, local's requests are not filtered at all: one person, as before
  (threads still get ``owner: local``, so adding people later keeps them local's).
- Anything the handlers here do not name is refused (403), so a new kind of resource is
  closed until it is thought about.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

import httpx
from langgraph_sdk import Auth, get_client

from local2.config import Settings, load_settings
from local2.contracts import LOCAL, LOCAL_NAME, Person
from local2.platform.owners import PEOPLE, owned, owner_of, scope_of
from local2.service import Access, Guard, Identify, challenge, networks, people_alone

TOKEN_ENV = "LOCAL2_API_TOKEN"  # as local2.http._app reads it
ADMIN = "admin"  # may read everyone's, audited
ONE_PERSON = "one-person"  # nobody configured: everything is local's, nothing filtered
STORE_READS = frozenset({"get", "search", "list_namespaces"})

auth = Auth()


class Roster:
    """LoCAL2's people, where ``local2 users`` keeps them: opened once, then kept."""

    def __init__(self, settings_of: Callable[[], Settings] = load_settings) -> None:
        self._settings_of = settings_of
        self._settings: Settings | None = None
        self._access: Access | None = None
        self._guard: Guard | None = None
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = self._settings_of()
        return self._settings

    def access(self) -> Access:
        """Owner checks over the people; none while there can be none (no conversation
        store yet: the server keeps no local file until someone is added)."""
        with self._lock:
            if self._access is None:
                people = people_alone(self.settings)
                if people is None:
                    return Access(None)
                self._access = Access(people)
            return self._access

    def identify(self) -> Identify:
        """Who requests are for, by LoCAL2's rule (:mod:`local2.service.sign_in`), with one
        :class:`~local2.service.sign_in.Guard` for the life of the server."""
        access = self.access()
        server = self.settings.server
        token = os.environ.get(TOKEN_ENV) or None
        with self._lock:
            if self._guard is None:  # the first request: a token set means beyond loopback
                self._guard = Guard(loopback=token is None, people_seen=access.configured())
            guard = self._guard
        header = server.trusted_user_header or None
        return Identify(access, token, header, networks(server.trusted_proxies), guard)

    def person(
        self, authorization: str | None, headers: Mapping[bytes, bytes], client: str | None
    ) -> tuple[Person | None, bool]:
        """Who sent a request (None: nobody we know), and whether they are alone here."""
        who = self.identify()
        header = who.user_header
        proxied = headers.get(header.lower().encode()) if header else None
        person = who.person(
            authorization or "", proxied.decode("latin-1") if proxied else None, client
        )
        alone = person == LOCAL and not who.guard.people_seen and not who.access.configured()
        return person, alone

    def refusal(self) -> str:
        """The 401's detail (:meth:`~local2.service.sign_in.Identify.refusal`), as one line."""
        detail = self.identify().refusal()
        return detail if isinstance(detail, str) else f"{detail['error']} Fix: {detail['fix']}"

    def admin_read(self, admin: str, kind: str, item: str, owner: str) -> None:
        self.access().note_read(admin, kind, item, owner)


ROSTER = Roster()


@auth.authenticate
async def authenticate(
    authorization: str | None,
    headers: dict[bytes, bytes],
    scope: dict[str, Any],  # the request's ASGI scope, as the platform passes it
) -> Auth.types.MinimalUserDict:
    """The person behind a request, as the platform's user: identity is their name."""
    client = (scope.get("client") or (None,))[0]
    person, alone = await asyncio.to_thread(ROSTER.person, authorization, headers, client)
    if person is None:
        detail = await asyncio.to_thread(ROSTER.refusal)
        # The platform drops these headers (0.16); http_app.SignInChallenge puts them back.
        said = challenge(authorization)
        raise Auth.exceptions.HTTPException(
            status_code=401, detail=detail, headers={"WWW-Authenticate": said}
        )
    permissions = [ADMIN] if person.admin else []
    if alone:
        permissions.append(ONE_PERSON)
    return {"identity": person.name, "display_name": person.name, "permissions": permissions}


# -- helpers --------------------------------------------------------------------------------


def name_of(ctx: Auth.types.AuthContext) -> str:
    return str(ctx.user.identity)


def own_only(ctx: Auth.types.AuthContext) -> Auth.types.FilterType | None:
    """The filter that keeps only the person's own (nothing when they are alone)."""
    return None if ONE_PERSON in ctx.permissions else {"owner": name_of(ctx)}


def mark_owner(ctx: Auth.types.AuthContext, value: Any) -> None:
    """What is being created is the person's (whatever the request said)."""
    if value.get("metadata") is None:
        value["metadata"] = {}
    value["metadata"]["owner"] = name_of(ctx)


def keep_owner(ctx: Auth.types.AuthContext, value: Any) -> None:
    """A change may not hand a thing to someone else."""
    metadata = value.get("metadata")
    if isinstance(metadata, dict) and "owner" in metadata:
        metadata["owner"] = name_of(ctx)


async def audit(admin: str, kind: str, item: str, owner: str) -> None:
    await asyncio.to_thread(ROSTER.admin_read, admin, kind, item, owner)


# An admin's read looks the thread's owner up through the server itself (in process, as
# the admin); that lookup's own read must not look up again.
_looking_up: ContextVar[bool] = ContextVar("local2_looking_up", default=False)


async def thread_owner(thread_id: object) -> str | None:
    """The owner of a thread (None: no such thread), asked of the server in process."""

    marker = _looking_up.set(True)
    try:
        async with get_client() as client:
            thread = await client.threads.get(str(thread_id))
    except httpx.HTTPStatusError as error:
        if error.response.status_code == 404:
            return None  # no such thread: the read itself answers 404
        raise  # an admin's read that cannot be written down does not happen
    finally:
        _looking_up.reset(marker)
    return str((thread.get("metadata") or {}).get("owner") or LOCAL_NAME)


async def read_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A person reads their own threads; an admin anyone's, each read of another's audited."""
    if ADMIN not in ctx.permissions or ONE_PERSON in ctx.permissions:
        return own_only(ctx)
    if _looking_up.get() or not value.get("thread_id"):
        return None
    owner = await thread_owner(value["thread_id"])
    if owner is not None and owner != name_of(ctx):
        await audit(name_of(ctx), "thread", str(value["thread_id"]), owner)
    return None


# -- what a person creates or changes: threads (the sessions), assistants, crons -----------


@auth.on(resources=["threads", "assistants", "crons"], actions="create")
async def create_owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """What a person creates is theirs: a thread, an assistant or a cron."""
    mark_owner(ctx, value)
    return own_only(ctx)  # an id that is someone else's thread: 409, never theirs returned


@auth.on(resources=["threads", "crons"], actions="update")
async def update_owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A change to a thread or a cron: the person's own, and it stays theirs."""
    keep_owner(ctx, value)
    return own_only(ctx)


# -- threads and their runs -----------------------------------------------------------------


@auth.on.threads.create_run
async def create_run(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    mark_owner(ctx, value)  # a run without a thread makes one: the person's
    return own_only(ctx)


@auth.on.threads.read
async def on_thread_read(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    return await read_thread(ctx, value)


@auth.on.threads.search
async def search_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """One's own threads; an admin's search that names ``metadata.owner`` lists that
    person's (audited); a thread's runs are a read of the thread."""
    if value.get("thread_id"):
        return await read_thread(ctx, value)
    named = (value.get("metadata") or {}).get("owner")
    if ADMIN in ctx.permissions and isinstance(named, str) and named != name_of(ctx):
        await audit(name_of(ctx), "threads", "search", named)
        return None
    return own_only(ctx)


@auth.on.threads.delete
async def delete_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    return own_only(ctx)


# -- assistants -----------------------------------------------------------------------------


@auth.on.assistants(actions=["read", "search"])
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """The graph's own assistant is everyone's to run; one a person made is theirs."""
    if ONE_PERSON in ctx.permissions:
        return None
    return {"$or": [{"created_by": "system"}, {"owner": name_of(ctx)}]}  # type: ignore[return-value]  # the SDK's FilterType lacks $or, which the server accepts


@auth.on.assistants(actions=["update", "delete"])
async def change_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    keep_owner(ctx, value)
    return own_only(ctx)  # the graph's own has no owner: no one changes it


# -- crons ----------------------------------------------------------------------------------


@auth.on.crons(actions=["read", "search", "delete"])
async def own_crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    return own_only(ctx)


# -- the store ------------------------------------------------------------------------------


def refused(detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


@auth.on.store()
async def scope_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every namespace a person names is in their own part of the store; an admin may read
    another's part by naming it (``["people", "<name>", ...]``, audited)."""
    if ONE_PERSON in ctx.permissions:
        return
    name = name_of(ctx)
    namespace = tuple(value.get("namespace") or ())
    if namespace[:1] == (PEOPLE,):
        if ADMIN in ctx.permissions and ctx.action in STORE_READS and len(namespace) >= 2:
            owner, inside = owner_of(namespace[1]), namespace[2:]
            value["namespace"] = owned(owner, inside)
            if owner != name:
                item = ".".join((*inside, *([value["key"]] if value.get("key") else [])))
                await audit(name, "store", item or "*", owner)
            return
        raise refused(f"Namespaces starting with '{PEOPLE}' are each person's own part.")
    if name == LOCAL_NAME and not namespace:
        raise refused("Name a namespace: the whole store is everyone's.")
    value["namespace"] = owned(name, namespace)
    if ctx.action == "list_namespaces" and value.get("max_depth") is not None:
        value["max_depth"] += len(scope_of(name))


# -- anything else --------------------------------------------------------------------------


@auth.on
async def refuse_the_rest(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """A resource or action no handler above names is refused (403)."""
    return False
