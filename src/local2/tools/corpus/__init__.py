"""Offline corpora: documents searched with BM25 (bm25s) and read by ``corpus://`` URL, for
the ``corpus`` search provider and for question sets that carry their documents.

- :mod:`.documents`: a corpus on disk (a folder of ``.md``/``.txt`` files or a ``.jsonl``);
- :mod:`.urls`: the ``corpus://<name>/<id>`` rule;
- :mod:`.index`: the BM25 index, opened once per process;
- :mod:`.serve`: the search provider and ``web_fetch``'s reader.
"""

from local2.tools.corpus.documents import (
    Document,
    corpus_name,
    folder_files,
    json_lines,
    load_documents,
    pydantic_problem,
    read_folder,
    reading,
    write_documents,
)
from local2.tools.corpus.index import CorpusHit, CorpusIndex, open_corpus
from local2.tools.corpus.serve import CorpusProvider, CorpusReader, corpus_fetch
from local2.tools.corpus.urls import corpus_url, is_corpus_url, parse_corpus_url

__all__ = [
    "CorpusHit",
    "CorpusIndex",
    "CorpusProvider",
    "CorpusReader",
    "Document",
    "corpus_fetch",
    "corpus_name",
    "corpus_url",
    "folder_files",
    "is_corpus_url",
    "json_lines",
    "load_documents",
    "open_corpus",
    "parse_corpus_url",
    "pydantic_problem",
    "read_folder",
    "reading",
    "write_documents",
]
