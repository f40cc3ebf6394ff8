"""BM25 over your own documents at ``corpus_path`` (:mod:`local2.tools._corpus`); never part
of ``auto``. With ``web.offline``, the only provider there is."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.tools._search import ProviderSpec, SearchProvider, register_provider


class CorpusSettings(ProviderSettings):
    corpus_path: Path | None = None  # the corpus provider's documents: a folder or a .jsonl

    def needs(self) -> str | None:
        if self.corpus_path is None:
            return (
                "provider corpus needs corpus_path: a folder of .md/.txt files or a .jsonl "
                "file of documents"
            )
        return None


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> SearchProvider:
    # The index (bm25s) loads when the corpus is chosen, not when settings learn its key.
    from local2.tools._corpus import CorpusProvider

    path = cfg.of(CorpusSettings).corpus_path
    if path is None:  # refused by the settings (CorpusSettings.needs)
        raise ValueError("provider corpus needs corpus_path")
    return CorpusProvider(path)


SPEC = register_provider(ProviderSpec("corpus", CorpusSettings, _make))
