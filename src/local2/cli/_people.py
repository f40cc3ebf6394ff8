"""Who a command acts for (``local2 --as NAME``), and the owner checks of commands that open
no agent (``runs``, ``arena``, reading research runs).

The terminal is local's by default: whoever can run ``local2`` on this machine can read the
store anyway. ``--as`` acts for someone else, allowed where that adds no reach: on a store
that is this machine's own (``system.checkpointer`` sqlite or memory), or, on the team's
Postgres, for an admin proving it with their token in ``LOCAL2_TOKEN``; that admin's
``--as`` is written down as a read of the other person's things
(``local2 users reads``).

Start-up matters (``bench/startup.py``): storage is imported only when it is used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from local2.contracts import LOCAL, LOCAL_NAME, Person
from local2.errors import InvalidInput

if TYPE_CHECKING:
    from local2.config import Settings
    from local2.service import Access
    from local2.storage import People

TOKEN_ENV = "LOCAL2_TOKEN"
LOCAL_STORES = ("sqlite", "memory")  # stores this machine alone reads: --as needs no token
SEE_PEOPLE = "See who there is with: local2 users list"


@contextmanager
def people_of(settings: Settings, create: bool = False) -> Iterator[People | None]:
    """The people in the conversation store, closed after (``local2 users`` manages them).
    None while there can be none and ``create`` is false: nobody is configured, and a read
    must not create the database as a side effect."""
    # lazy: pydantic, local2.config: ~269 ms, 60 modules at local2 --help
    from local2.service import people_alone

    people = people_alone(settings, create)
    try:
        yield people
    finally:
        if people is not None:
            people.close()


def access_of(settings: Settings) -> AbstractContextManager[Access]:
    """Owner checks over the store's people, for a command that opens no agent."""
    # lazy: pydantic, local2.config: ~307 ms, 60 modules at local2 --help
    from local2.service import opened_access

    return opened_access(settings)


def configured(settings: Settings) -> bool:
    """Whether anyone has been added (``local2 users add``)."""
    with access_of(settings) as access:
        return access.configured()


def act_as(settings: Settings, name: str) -> Person:
    """The person ``--as NAME`` names, once this terminal may act for them (else
    :class:`~local2.errors.InvalidInput` saying why and what to do)."""
    # lazy: local2.contracts, local2.storage: ~19 ms, 11 modules at local2 --help
    from local2.storage import check_name

    if name != LOCAL_NAME:
        try:
            check_name(name)
        except InvalidInput as exc:
            raise InvalidInput(f"--as {name}: {exc.message}", SEE_PEOPLE) from None
    with access_of(settings) as access:
        admin = _admin_allowed(settings, access)
        person = LOCAL if name == LOCAL_NAME else access.named(name)
        if person is None:
            raise InvalidInput(
                f"--as {name}: there is no person '{name}' here.",
                f"{SEE_PEOPLE} (add them with: local2 users add {name})",
            )
        if admin is not None and admin.name != person.name:
            access.note_read(admin.name, "as", person.name, person.name)
    return person


def _admin_allowed(settings: Settings, access: Access) -> Person | None:
    """None on a local store (anyone here may act for anyone); on a shared one the admin
    whose token ``LOCAL2_TOKEN`` holds, or a refusal."""

    store = settings.system.checkpointer
    if store in LOCAL_STORES:
        return None
    fix = (
        f"export {TOKEN_ENV}=<an admin's token> (local2 users add NAME --admin prints one), "
        "or leave out --as to act as local."
    )
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise InvalidInput(
            f"--as is refused on a shared store (system.checkpointer: {store}) without an "
            f"admin's token in {TOKEN_ENV}: everyone's conversations are there.",
            fix,
        )
    admin = access.token_holder(token)
    if admin is None:
        raise InvalidInput(
            f"--as is refused: {TOKEN_ENV} holds no one's current token here "
            "(a rotated or removed person's token stops working).",
            fix,
        )
    if not admin.admin:
        raise InvalidInput(
            f"--as is refused: {TOKEN_ENV} is the token of '{admin.name}', who is not an admin.",
            fix,
        )
    return admin
