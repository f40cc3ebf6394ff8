"""``local2 doctor`` for a team deployment: the model server, Postgres and the Chroma server,
each checked only when the configuration names it."""

from __future__ import annotations

import os
from typing import Any

from local2.config import Settings


def _check(name: str, status: str, detail: str, fix: str = "") -> Any:
    from local2.service.doctor import Check

    return Check(name, status, detail, fix)


def openai_check(settings: Settings, model: str) -> Any:
    import httpx

    conf = settings.generator.openai
    key = os.environ.get(conf.api_key_env)
    url = f"{conf.base_url.rstrip('/')}/models"
    try:
        response = httpx.get(
            url, headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=3
        )
    except httpx.HTTPError as exc:
        return _check(
            "model server",
            "fail",
            f"cannot reach {conf.base_url}: {exc}",
            "start it (e.g. `vllm serve MODEL`) or fix generator.openai.base_url",
        )
    if response.status_code in (401, 403):
        return _check(
            "model server", "fail", f"{conf.base_url} refused the key", f"set {conf.api_key_env}"
        )
    if response.status_code != 200:
        return _check("model server", "fail", f"{url} answered {response.status_code}")
    served = [m.get("id") for m in response.json().get("data", [])]
    if model not in served:
        return _check(
            "model server",
            "fail",
            f"{model} is not served (served: {served})",
            "set generator.model to a served id",
        )
    return _check("model server", "ok", f"{model} served at {conf.base_url}")


def postgres_check(settings: Settings) -> Any:
    import psycopg

    from local2.storage.postgres import describe

    url = settings.system.postgres_url or ""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            version = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        return _check(
            "postgres",
            "fail",
            f"{describe(url)}: {reason}",
            "start Postgres and check LOCAL2_POSTGRES_URL (docs/deploy.md)",
        )
    return _check("postgres", "ok", f"{describe(url)} (server {version[0] if version else '?'})")


def chroma_check(settings: Settings) -> Any:
    from local2.memory.chroma import chroma_client

    try:
        chroma_client(settings, "chroma").heartbeat()
    except Exception as exc:  # ChromaUnavailable, or whatever the client raised
        return _check(
            "chroma server",
            "fail",
            str(exc),
            "chroma run --path DIR --port PORT, or unset memory.chroma_url",
        )
    return _check("chroma server", "ok", f"reachable at {settings.memory.chroma_url}")


def deploy_checks(settings: Settings, backend: str, model: str) -> list[Any]:
    checks = []
    if backend == "openai":
        checks.append(openai_check(settings, model))
    if settings.system.checkpointer == "postgres":
        checks.append(postgres_check(settings))
    if settings.memory.chroma_url:
        checks.append(chroma_check(settings))
    return checks
