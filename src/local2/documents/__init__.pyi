from .extract import MAX_ELEMENTS as MAX_ELEMENTS
from .extract import Favor as Favor
from .extract import clean_text as clean_text
from .extract import decode_body as decode_body
from .extract import extract_main_text as extract_main_text
from .extract import extract_page as extract_page
from .extract import fast_text as fast_text
from .extract import truncate_paragraphs as truncate_paragraphs
from .formats import declared_format as declared_format
from .formats import guess_format as guess_format
from .model import Document as Document
from .model import Limits as Limits
from .model import Page as Page
from .passages import GAP as GAP
from .passages import Passage as Passage
from .passages import document_note as document_note
from .passages import page_link as page_link
from .passages import page_marker as page_marker
from .passages import page_sections as page_sections
from .passages import pages_text as pages_text
from .passages import render_passages as render_passages
from .read import read_document as read_document

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
    "read_document",
    "render_passages",
    "truncate_paragraphs",
]
