"""``local2 search "..." [--in files|documents|memory|library] [-k N] [--json]``: the same retrieval
the agent's tools use, at the terminal, so a person can check what the agent will see.

Each hit shows where it is (path, page), its fused score, the passage that answers and why
it was found (its rank by words, BM25, and by meaning, the embedding, or the best hit that
names its file: ``linked from notes/X.md``); ``--json`` prints
the service's :class:`~local2.contracts._search.SearchHits` as it is (``{query, hits: [{source,
path, page, score, passage, why}]}``; a library hit also ``entry_id``, ``title``, ``read_at``
and ``runs``). The person is local, or ``--as NAME``: their
documents and memory, never anyone else's.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Literal

import typer

from local2.cli._common import fail, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.contracts import SearchHit, SearchHits

Within = Literal["files", "documents", "memory", "library"]


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.")],
    within: Annotated[
        str,
        typer.Option(
            "--in",
            help="Where: files (the indexed folders), documents (yours), memory or library.",
        ),
    ] = "files",
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="How many hits.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Search your own text as the agent's tools do: each hit's passage and why it was found."""
    # lazy: pydantic, charset_normalizer, local2.service: ~266 ms, 109 modules at local2 --help
    from local2.service import open_searcher

    if within not in ("files", "documents", "memory", "library"):
        fail(f"cannot search {within!r}", "use --in files, documents, memory or library")
    settings = settings_of(ctx)
    with friendly_errors("search failed"):
        found = open_searcher(settings).search(person_of(ctx), query, within, k)  # type: ignore[arg-type]  # checked above
    if as_json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return
    show(found)


def show(found: SearchHits) -> None:
    """The hits as a person reads them: where, score and why on one line, the passage under."""
    if not found["hits"]:
        out.print(f"Nothing found for: {found['query']}")
        return
    for n, hit in enumerate(found["hits"], start=1):
        out.print(f"[bold][{n}] {where(hit)}[/]  [dim]score {hit['score']:.4f}; {why(hit)}[/]")
        if "entry_id" in hit:
            out.print(f"    {read(hit)}", markup=False, highlight=False)
        out.print(f"    {hit['passage']}", markup=False)


def where(hit: SearchHit) -> str:
    if hit["page"] is None or "#page=" in hit["path"]:  # a library hit's URL names its page
        return hit["path"]
    return f"{hit['path']}, page {hit['page']}"


def read(hit: SearchHit) -> str:
    """A library hit's kept copy: ``Title (lib-..., read 2025-05-01 09:30 by run r1)``."""
    at = dt.datetime.fromtimestamp(hit.get("read_at") or 0).strftime("%Y-%m-%d %H:%M")
    runs = f" by run {', '.join(hit.get('runs') or [])}" if hit.get("runs") else ""
    return f"{hit.get('title', '')} ({hit.get('entry_id')}, read {at}{runs})"


def why(hit: SearchHit) -> str:
    """``words #2, meaning #1``: its rank by BM25 and by similarity (not found: left out);
    ``linked from notes/X.md``: a best hit, that file, names this one by its title."""
    found = hit["why"]
    ranks = (("words", found["bm25_rank"]), ("meaning", found["vector_rank"]))
    said = [f"{side} #{rank}" for side, rank in ranks if rank is not None]
    if found.get("linked_from"):
        said.append(f"linked from {found['linked_from']}")
    elif found.get("linked_rank") is not None:
        said.append(f"linked #{found['linked_rank']}")
    return ", ".join(said) or "-"


def register(app: typer.Typer) -> None:
    """Add ``search`` to the main CLI."""
    app.command("search")(search)
