"""Documents: PDF, Word, PowerPoint, OpenDocument text, EPUB, HTML and plain text, read into
pages of text by one reader per format, each run in a bounded worker (:mod:`local2.bounded`).

The server imports only :mod:`local2.documents.read` (and what it imports): the format
libraries (pdfium, python-docx, ...) are imported in the worker, where they are used.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.documents.extract import MAX_ELEMENTS as MAX_ELEMENTS
    from local2.documents.extract import Favor as Favor
    from local2.documents.extract import clean_text as clean_text
    from local2.documents.extract import decode_body as decode_body
    from local2.documents.extract import extract_main_text as extract_main_text
    from local2.documents.extract import extract_page as extract_page
    from local2.documents.extract import fast_text as fast_text
    from local2.documents.extract import truncate_paragraphs as truncate_paragraphs
    from local2.documents.formats import declared_format as declared_format
    from local2.documents.formats import guess_format as guess_format
    from local2.documents.model import Document as Document
    from local2.documents.model import Limits as Limits
    from local2.documents.model import Page as Page
    from local2.documents.passages import GAP as GAP
    from local2.documents.passages import Passage as Passage
    from local2.documents.passages import document_note as document_note
    from local2.documents.passages import page_link as page_link
    from local2.documents.passages import page_marker as page_marker
    from local2.documents.passages import page_sections as page_sections
    from local2.documents.passages import pages_text as pages_text
    from local2.documents.passages import render_passages as render_passages
    from local2.documents.read import read_document as read_document
else:
    __getattr__ = lazy_face(__name__, __file__)
