from ._extract import GAP as GAP
from ._extract import MAX_ELEMENTS as MAX_ELEMENTS
from ._extract import Favor as Favor
from ._extract import Passage as Passage
from ._extract import clean_text as clean_text
from ._extract import decode_body as decode_body
from ._extract import document_note as document_note
from ._extract import extract_main_text as extract_main_text
from ._extract import extract_page as extract_page
from ._extract import fast_text as fast_text
from ._extract import page_link as page_link
from ._extract import page_marker as page_marker
from ._extract import page_sections as page_sections
from ._extract import pages_text as pages_text
from ._extract import published_date as published_date
from ._extract import render_passages as render_passages
from ._extract import truncate_paragraphs as truncate_paragraphs
from ._model import Document as Document
from ._model import Limits as Limits
from ._model import Page as Page
from ._model import declared_format as declared_format
from ._model import guess_format as guess_format
from ._read import read_document as read_document

__all__ = [
    "GAP",
    "MAX_ELEMENTS",
    "Document",
    "Favor",
    "Limits",
    "Page",
    "Passage",
    "clean_text",
    "declared_format",
    "decode_body",
    "document_note",
    "extract_main_text",
    "extract_page",
    "fast_text",
    "guess_format",
    "page_link",
    "page_marker",
    "page_sections",
    "pages_text",
    "published_date",
    "read_document",
    "render_passages",
    "truncate_paragraphs",
]
