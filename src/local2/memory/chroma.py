"""Which Chroma memory and the file index talk to: embedded on disk, or a Chroma server.

Embedded (the default) keeps each collection's directory under the data directory; one
process at a time may open it. A team shares a Chroma server instead (``chroma run --path
DIR --port 8000``, ``memory.chroma_url: http://host:8000``), which any number of LoCAL2
processes can use at once. A token, if the server wants one, comes from
``LOCAL2_CHROMA_TOKEN``. This is the only place that chooses.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from local2.errors import ChromaUnavailable

TOKEN_ENV = "LOCAL2_CHROMA_TOKEN"

log = logging.getLogger(__name__)


def chroma_client(settings: Any, subdir: str) -> Any:
    """A Chroma client: ``HttpClient`` for ``memory.chroma_url``, else a persistent directory
    ``<data_dir>/<subdir>``."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    url = settings.memory.chroma_url
    if not url:
        path = Path(settings.data_dir) / subdir
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    parts = urlsplit(url if "://" in url else f"http://{url}")
    ssl = parts.scheme == "https"
    token = os.environ.get(TOKEN_ENV)
    try:
        return chromadb.HttpClient(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or (443 if ssl else 8000),
            ssl=ssl,
            headers={"Authorization": f"Bearer {token}"} if token else None,
            settings=chroma_settings,
        )
    except ValueError as exc:  # chromadb's "Could not connect to a Chroma server"
        raise ChromaUnavailable(
            f"Cannot reach the Chroma server at {url} ({exc}). Start it with "
            "`chroma run --path DIR --port PORT`, or unset memory.chroma_url for embedded."
        ) from exc


def release_client(client: Any) -> None:
    """Let go of a client's files and connections (chromadb's ``close``, 1.5 on): an
    embedded client otherwise keeps its SQLite and index files open for the life of the
    process, one set per client made. The directory stays open while other clients of the
    same path are."""
    closing = getattr(client, "close", None)
    if closing is not None:
        try:
            closing()
        except Exception as exc:  # closing is tidying up: never the reason a close fails
            log.debug("chroma client close: %s", exc)


def vectors(rows: Sequence[Sequence[float]]) -> list[Sequence[float]]:
    """Embeddings as Chroma's API types them (its union of arrays and sequences defeats the
    type checker's inference of a plain list of lists)."""
    return list(rows)
