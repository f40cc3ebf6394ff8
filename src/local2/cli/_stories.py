"""``local2 stories``: run the acceptance stories against a live API and print a table.

Without ``--url`` the whole stack is started here: the configured model behind the real HTTP
API on a free loopback port, a fresh data directory, the mock search provider with the
stories' canned results, and the stories' pages served on loopback for ``web_fetch``.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import local2.cli._gc_pause as gc_pause
from local2.cli._common import err, fail, make_agent, out, settings_of
from local2.cli._errors import friendly_errors
from local2.errors import StoryError
from local2.ports import free_port

if TYPE_CHECKING:  # the runner, httpx, rich and pydantic load when the command runs
    from rich.table import Table

    from local2.config import Settings
    from local2.stories import StoryResult

PAGE_SERVER = "page_server"  # the `requires:` hint of stories that fetch the local pages


def default_stories_dir() -> Path:
    """``tests/stories`` of the working directory, else of the source checkout."""
    here = Path.cwd() / "tests" / "stories"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[3] / "tests" / "stories"


def with_overrides(settings: Settings, overrides: Mapping[str, Mapping[str, Any]]) -> Settings:
    """A copy of ``settings`` with ``{section: {key: value}}`` deep-merged in (validated)."""
    # lazy: pydantic, yaml, local2.config: ~104 ms, 68 modules at local2 --help
    from local2.config import Settings, deep_merge

    return Settings.model_validate(deep_merge(settings.model_dump(), overrides))


@contextmanager
def serve_pages(directory: Path) -> Iterator[str]:
    """Serve ``directory`` over HTTP on 127.0.0.1; yields the base URL."""
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer  # 40 ms: when used

    class QuietHandler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = partial(QuietHandler, directory=str(directory))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@contextmanager
def serve_api(app: Any) -> Iterator[str]:
    """Run a FastAPI app under uvicorn on a free loopback port; yields its base URL."""
    import uvicorn  # lazy: uvicorn, click: ~112 ms, 104 modules at local2 --help

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise StoryError("the in-process API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


# settings as YAML would give them, merged over the person's before they are checked
def story_overrides(stories_dir: Path, pages_url: str, work: Path) -> dict[str, Any]:
    """Settings for the in-process stack: fresh data, canned search, local pages fetchable."""
    overrides: dict[str, Any] = {  # as YAML would give them
        "system": {"data_dir": str(work / "data"), "checkpoint_path": None},
        "web": {
            "search": {"provider": "mock"},
            "fetch": {"allow_hosts": [pages_url.removeprefix("http://")]},
        },
    }
    template = stories_dir / "mock_results.json"
    if template.is_file():
        canned = work / "mock_results.json"
        canned.write_text(
            template.read_text(encoding="utf-8").replace("{PAGE_SERVER}", pages_url),
            encoding="utf-8",
        )
        overrides["web"]["search"]["mock_results"] = str(canned)
    return overrides


@contextmanager
def local_stack(
    ctx: typer.Context, stories_dir: Path, backend: str | None, model: str | None
) -> Iterator[str]:
    """The live stack in this process; yields the API's base URL."""
    # lazy: langgraph, langchain_core, local2.service: ~1.9 s, 1457 modules at local2 --help
    from local2.http import create_api

    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="local2-stories-")))
        pages = stories_dir / "pages"
        pages_url = stack.enter_context(serve_pages(pages if pages.is_dir() else work))
        settings = with_overrides(settings_of(ctx), story_overrides(stories_dir, pages_url, work))
        settings.system.checkpoint_path = settings.data_dir / "checkpoints.sqlite"
        ctx.obj = {**(ctx.obj or {}), "settings": settings}
        agent = make_agent(ctx, backend, model)
        gc_pause.resume("stories")  # the stories run for minutes
        stack.callback(agent.close)
        yield stack.enter_context(serve_api(create_api(agent)))


def results_table(results: list[StoryResult]) -> Table:
    from rich.table import Table  # lazy: rich: ~11 ms, 4 modules at local2 --help

    table = Table("story", "title", "result", "turns", "time", "reason")
    colour = {"pass": "green", "fail": "red", "skip": "yellow"}
    for r in results:
        table.add_row(
            r.id,
            r.title,
            f"[{colour[r.status]}]{r.status.upper()}[/]",
            str(r.turns),
            f"{r.duration_s:.1f}s",
            "\n".join(r.reasons) or "-",
        )
    return table


def register(app: typer.Typer) -> None:
    """Add the ``stories`` command to the CLI."""

    @app.command()
    def stories(
        ctx: typer.Context,
        url: Annotated[
            str | None,
            typer.Option("--url", help="A running LoCAL2 API (default: start one here)."),
        ] = None,
        only: Annotated[
            str | None, typer.Option("--only", help="Comma-separated story ids, e.g. S1,S3.")
        ] = None,
        directory: Annotated[
            Path | None, typer.Option("--dir", help="Stories directory (default: tests/stories).")
        ] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="Ollama model.")] = None,
        backend: Annotated[
            str | None, typer.Option("--backend", help="ollama | embedded | auto.")
        ] = None,
        timeout: Annotated[float, typer.Option("--timeout", help="Seconds per turn.")] = 600.0,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Run the acceptance stories (tests/stories/*.yaml) and print a pass/fail table."""

        # lazy: pydantic, yaml, local2.stories: ~194 ms, 152 modules at local2 --help
        import httpx

        from local2.stories import load_stories, run_stories

        stories_dir = directory or default_stories_dir()
        with friendly_errors():
            chosen = load_stories(stories_dir, only.split(",") if only else None)
        started = time.monotonic()
        with friendly_errors():
            try:
                if url:
                    results = run_stories(
                        url.rstrip("/"),
                        chosen,
                        timeout_s=timeout,
                        token=os.environ.get("LOCAL2_API_TOKEN"),
                        unavailable=[PAGE_SERVER],
                    )
                else:
                    with local_stack(ctx, stories_dir, backend, model) as base:
                        err.print(f"[dim]In-process API at {base}[/]")
                        results = run_stories(base, chosen, timeout_s=timeout)
            except httpx.HTTPError as exc:  # e.g. nothing listening at --url
                fail(f"cannot reach the API at {url}: {exc}", "start one with `local2 serve`")
                return
        if as_json:
            print(json.dumps([r.as_dict() for r in results], indent=2))
        else:
            out.print(results_table(results))
            passed = sum(r.passed for r in results)
            out.print(f"{passed}/{len(results)} passed in {time.monotonic() - started:.1f}s")
        if any(r.status == "fail" for r in results):
            raise typer.Exit(1)
