"""How routes describe what they return in ``/openapi.json``.

Payloads are TypedDicts (:mod:`local2.contracts`) the service builds as plain dicts. Routes
name them as documentation only: the payload goes out as built, so a field added by one
part is never silently dropped or refused on its way out.
"""

from __future__ import annotations

from typing import Any

# The error statuses routes can answer with (see :mod:`local2.service._problems`).
# FastAPI's ``responses``: OpenAPI response objects by status (JSON schema documents)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    422: {"description": "Invalid input: `detail` says what to change."},
    404: {"description": "No such session, turn, run or document."},
    413: {"description": "An upload over a limit: `detail` names it."},
    409: {
        "description": "The session is busy, a turn waits for approval, nothing is running "
        "to stop, or the turn was stopped (`detail` is `{error, fix, status: stopped}`)."
    },
    502: {"description": "The model failed: `detail` is `{error, fix}`."},
    503: {"description": "A model or store is unavailable: `detail` is `{error, fix}`."},
    507: {"description": "The data directory's disk is full: `detail` is `{error, fix}`."},
}


# FastAPI's route options (response_model, responses), as its decorators take them
def returns(model: Any, description: str = "Successful Response") -> dict[str, Any]:
    """Route options documenting ``model`` as the 200 response (and the error statuses)."""
    return {
        "response_model": None,
        "responses": {200: {"model": model, "description": description}, **ERROR_RESPONSES},
    }
