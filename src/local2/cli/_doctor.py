"""``local2 doctor``: what this setup can do, and the fix for what it cannot."""

from __future__ import annotations

import json

import typer

from local2.cli._common import BackendOpt, JsonOpt, ModelOpt, out, settings_of


def doctor(
    ctx: typer.Context, as_json: JsonOpt = False, backend: BackendOpt = None, model: ModelOpt = None
) -> None:
    """Check Ollama and its models (tools, thinking, context), the data directory, web search
    and MCP servers."""
    # lazy: pydantic, httpx, local2.config: ~453 ms, 173 modules at local2 --help
    from rich.table import Table

    from local2.service import run_checks

    checks = run_checks(settings_of(ctx), backend=backend, model=model)
    if as_json:
        print(json.dumps([c.as_dict() for c in checks], indent=2))
    else:
        table = Table("check", "status", "detail", "fix")
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        for c in checks:
            table.add_row(c.name, f"[{colour[c.status]}]{c.status}[/]", c.detail, c.fix)
        out.print(table)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
