"""Every refusal LoCAL2's MCP server can return has a fix, and none carries structured
content (which the TypeScript SDK's v1 client would check against the tool's output schema
and replace with its own complaint); ``resources/list`` pages with a stable cursor and
refuses one it never gave; a host's ``bearer`` is read whatever its case."""

from __future__ import annotations

import inspect

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import ListResourcesResult, Resource

import local2.errors as errors
import local2.mcp_server._failures as failures
import local2.mcp_server._listing as listing
from local2.service.sign_in import bearer, challenge


def every_error() -> list[type[errors.Local2Error]]:
    found = [
        kind
        for _, kind in inspect.getmembers(errors, inspect.isclass)
        if issubclass(kind, errors.Local2Error)
    ]
    assert len(found) > 30  # the whole tree, not a few
    return found


def made(kind: type[errors.Local2Error]) -> errors.Local2Error:
    """One error of ``kind`` raised as it is when no fix was given."""
    if kind is errors.AwaitingApproval:
        return kind({"session_id": "s-1", "calls": [{"tool": "web_fetch"}], "resume": "/x"})
    params = inspect.signature(kind.__init__).parameters
    needed = [p for p in list(params.values())[1:] if p.default is inspect.Parameter.empty]
    if any(p.kind is p.VAR_POSITIONAL for p in needed):
        return kind("something went wrong")
    return kind(*(["something went wrong"] + ["reason"] * (len(needed) - 1))[: len(needed)])


@pytest.mark.parametrize("kind", every_error(), ids=lambda k: k.__name__)
def test_every_refusal_has_a_fix_and_no_structured_content(kind: type[errors.Local2Error]) -> None:
    exc = made(kind)
    result = failures.failed_call(exc)
    said = failures.said_in(result)
    assert result.is_error and result.structured_content is None
    assert said is not None and said["error"].strip() and said["fix"].strip(), kind
    error = failures.mcp_error(exc)
    assert isinstance(error, MCPError) and error.error.data["fix"].strip()


def test_a_crash_is_said_with_a_fix() -> None:
    said = failures.said_in(failures.crashed())
    assert said is not None and said["status"] == 500 and "log" in said["fix"]


def test_an_unknown_resource_has_the_code_of_the_sessions_protocol() -> None:
    unknown = errors.UnknownRun("No research run 'x'.")
    assert failures.mcp_error(unknown, "2025-11-25").error.code == -32002
    assert failures.mcp_error(unknown, "2026-07-28").error.code == -32602


def test_resources_are_paged_with_a_stable_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [
        listing.Listed(float(100 - n), Resource(uri=f"local2://documents/doc-{n}", name=str(n)))
        for n in range(7)
    ]
    monkeypatch.setattr(listing, "everything", lambda agent, person: list(items))
    monkeypatch.setattr(listing, "PAGE_SIZE", 3)
    seen: list[str] = []
    cursor: str | None = None
    pages: list[ListResourcesResult] = []
    while True:
        shown = listing.page(None, None, cursor)  # type: ignore[arg-type]  # everything is patched
        pages.append(shown)
        seen += [str(r.uri) for r in shown.resources]
        if shown.next_cursor is None:
            break
        if len(pages) == 1:  # a new item arrives at the top between pages: nothing moves
            items.insert(
                0, listing.Listed(200.0, Resource(uri="local2://research/r-new", name="n"))
            )
        cursor = shown.next_cursor
    assert seen == [f"local2://documents/doc-{n}" for n in range(7)]
    assert [len(p.resources) for p in pages] == [3, 3, 1]
    assert listing.page(None, None, "").resources[0].uri == "local2://research/r-new"  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidInput, match="not one of ours"):
        listing.page(None, None, "not-a-cursor")  # type: ignore[arg-type]


def test_the_bearer_scheme_is_read_in_any_case() -> None:
    for header in ("Bearer t0k", "bearer t0k", "BEARER  t0k ", " bEaReR t0k"):
        assert bearer(header) == "t0k", header
    assert bearer("") == "" and bearer(None) == ""
    assert bearer("Basic dXNlcg==") == "Basic dXNlcg=="  # someone's credential: nobody's token
    assert bearer("Bearer") == "Bearer"
    assert challenge(None).startswith('Bearer realm="LoCAL2", error_description="')
    assert 'error="invalid_token"' in challenge("bearer wrong")
    assert "\\" not in challenge(None) and challenge(None).count('"') == 4
