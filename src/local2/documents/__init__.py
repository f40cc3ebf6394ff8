"""Documents: PDF, Word, PowerPoint, OpenDocument text, EPUB, HTML and plain text, read into
pages of text by one reader per format, each run in a bounded worker (:mod:`local2.bounded`).

The server imports only :mod:`local2.documents._read` (and what it imports): the format
libraries (pdfium, python-docx, ...) are imported in the worker, where they are used.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
