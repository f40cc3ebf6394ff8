from .documents import CorpusDocument as CorpusDocument
from .documents import corpus_name as corpus_name
from .documents import folder_files as folder_files
from .documents import json_lines as json_lines
from .documents import load_documents as load_documents
from .documents import pydantic_problem as pydantic_problem
from .documents import read_folder as read_folder
from .documents import reading as reading
from .documents import write_documents as write_documents
from .index import CorpusHit as CorpusHit
from .index import CorpusIndex as CorpusIndex
from .index import open_corpus as open_corpus
from .serve import CorpusProvider as CorpusProvider
from .serve import CorpusReader as CorpusReader
from .serve import corpus_fetch as corpus_fetch
from .urls import corpus_url as corpus_url
from .urls import is_corpus_url as is_corpus_url
from .urls import parse_corpus_url as parse_corpus_url

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
