"""Offline corpora: documents searched with BM25 (bm25s) and read by ``corpus://`` URL, for
the ``corpus`` search provider and for question sets that carry their documents.

- :mod:`.documents`: a corpus on disk (a folder of ``.md``/``.txt`` files or a ``.jsonl``);
- :mod:`.urls`: the ``corpus://<name>/<id>`` rule;
- :mod:`.index`: the BM25 index, opened once per process;
- :mod:`.serve`: the search provider and ``web_fetch``'s reader.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.tools.corpus.documents import CorpusDocument as CorpusDocument
    from local2.tools.corpus.documents import corpus_name as corpus_name
    from local2.tools.corpus.documents import folder_files as folder_files
    from local2.tools.corpus.documents import json_lines as json_lines
    from local2.tools.corpus.documents import load_documents as load_documents
    from local2.tools.corpus.documents import pydantic_problem as pydantic_problem
    from local2.tools.corpus.documents import read_folder as read_folder
    from local2.tools.corpus.documents import reading as reading
    from local2.tools.corpus.documents import write_documents as write_documents
    from local2.tools.corpus.index import CorpusHit as CorpusHit
    from local2.tools.corpus.index import CorpusIndex as CorpusIndex
    from local2.tools.corpus.index import open_corpus as open_corpus
    from local2.tools.corpus.serve import CorpusProvider as CorpusProvider
    from local2.tools.corpus.serve import CorpusReader as CorpusReader
    from local2.tools.corpus.serve import corpus_fetch as corpus_fetch
    from local2.tools.corpus.urls import corpus_url as corpus_url
    from local2.tools.corpus.urls import is_corpus_url as is_corpus_url
    from local2.tools.corpus.urls import parse_corpus_url as parse_corpus_url
else:
    __getattr__ = lazy_face(__name__, __file__)
