"""Offline corpora: documents searched with BM25 (bm25s) and read by ``corpus://`` URL, for
the ``corpus`` search provider and for question sets that carry their documents.

- :mod:`.documents`: a corpus on disk (a folder of ``.md``/``.txt`` files or a ``.jsonl``);
- :mod:`.urls`: the ``corpus://<name>/<id>`` rule;
- :mod:`.index`: the BM25 index, opened once per process;
- :mod:`.serve`: the search provider and ``web_fetch``'s reader.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
