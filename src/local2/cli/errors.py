"""Errors a person can act on, as one message on stderr and an exit code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from local2.cli.common import fail


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn the errors a person can act on into a message and an exit code."""
    from local2.config import SettingsError
    from local2.errors import (
        AwaitingApproval,
        InvalidId,
        InvalidQuery,
        ModelError,
        StorageUnavailable,
        TurnCancelled,
        UnknownTurn,
    )

    try:
        yield
    except (ModelError, StorageUnavailable) as exc:
        fail(exc.message, exc.fix)
    except TurnCancelled:
        fail("Stopped before the answer: nothing was recorded.", code=130)
    except (InvalidQuery, AwaitingApproval) as exc:
        fail(str(exc), code=2)
    except InvalidId as exc:
        fail(str(exc), code=2)
    except UnknownTurn as exc:
        fail(str(exc), code=3)
    except SettingsError as exc:
        fail(f"Configuration error: {exc}")
