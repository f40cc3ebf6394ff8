"""The MCP SDK's own clients against LoCAL2's MCP server (tests and bench/mcp_overhead.py):
streamable HTTP at ``/mcp`` with a bearer token, or ``local2 mcp`` over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx2
import yaml
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def http_session(
    url: str, token: str | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised session with the server at ``url`` (``.../mcp``)."""
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=sent, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def write_config(config_dir: Path, overrides: dict[str, dict[str, Any]]) -> Path:
    """``overrides`` as a config directory (one YAML file per section)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    for section, values in overrides.items():
        (config_dir / f"{section}.yaml").write_text(yaml.safe_dump(values))
    return config_dir


@asynccontextmanager
async def stdio_session(
    config_dir: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    errlog: TextIO = sys.stderr,
) -> AsyncIterator[ClientSession]:
    """``local2 --config DIR [extra] mcp`` started by the SDK's stdio client (its stderr to
    ``errlog``)."""
    import os

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "local2.cli", "--config", str(config_dir), *extra, "mcp"],
        env={**os.environ, **(env or {})},
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, read_timeout_seconds=300) as session,
    ):
        await session.initialize()
        yield session


def structured(result: Any) -> dict[str, Any]:
    """A tool result's structured content (its JSON text when it has none)."""
    if result.structured_content is not None:
        found: dict[str, Any] = result.structured_content
        return found
    parsed: dict[str, Any] = json.loads(result.content[0].text)
    return parsed
