"""Offline corpora: documents searched with BM25 (bm25s) and read by ``corpus://`` URL, for
the ``corpus`` search provider and for question sets that carry their documents.

- :mod:`.documents`: a corpus on disk (a folder of ``.md``/``.txt`` files or a ``.jsonl``);
- :mod:`.urls`: the ``corpus://<name>/<id>`` rule;
- :mod:`.index`: the BM25 index, opened once per process;
- :mod:`.serve`: the search provider and ``web_fetch``'s reader.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "CorpusHit": "local2.tools.corpus.index",
    "CorpusIndex": "local2.tools.corpus.index",
    "CorpusProvider": "local2.tools.corpus.serve",
    "CorpusReader": "local2.tools.corpus.serve",
    "CorpusDocument": "local2.tools.corpus.documents",
    "corpus_fetch": "local2.tools.corpus.serve",
    "corpus_name": "local2.tools.corpus.documents",
    "corpus_url": "local2.tools.corpus.urls",
    "folder_files": "local2.tools.corpus.documents",
    "is_corpus_url": "local2.tools.corpus.urls",
    "json_lines": "local2.tools.corpus.documents",
    "load_documents": "local2.tools.corpus.documents",
    "open_corpus": "local2.tools.corpus.index",
    "parse_corpus_url": "local2.tools.corpus.urls",
    "pydantic_problem": "local2.tools.corpus.documents",
    "read_folder": "local2.tools.corpus.documents",
    "reading": "local2.tools.corpus.documents",
    "write_documents": "local2.tools.corpus.documents",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "CorpusDocument",
    "CorpusHit",
    "CorpusIndex",
    "CorpusProvider",
    "CorpusReader",
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
