"""Documents: PDF, Word, PowerPoint, OpenDocument text, EPUB, HTML and plain text, read into
pages of text by one reader per format, each run in a bounded worker (:mod:`local2.bounded`).

The server imports only :mod:`local2.documents.read` (and what it imports): the format
libraries (pdfium, python-docx, ...) are imported in the worker, where they are used.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "GAP": "local2.documents.passages",
    "MAX_ELEMENTS": "local2.documents.extract",
    "Document": "local2.documents.model",
    "Favor": "local2.documents.extract",
    "Limits": "local2.documents.model",
    "Page": "local2.documents.model",
    "Passage": "local2.documents.passages",
    "clean_text": "local2.documents.extract",
    "declared_format": "local2.documents.formats",
    "decode_body": "local2.documents.extract",
    "document_note": "local2.documents.passages",
    "extract_main_text": "local2.documents.extract",
    "extract_page": "local2.documents.extract",
    "fast_text": "local2.documents.extract",
    "guess_format": "local2.documents.formats",
    "page_link": "local2.documents.passages",
    "page_marker": "local2.documents.passages",
    "page_sections": "local2.documents.passages",
    "pages_text": "local2.documents.passages",
    "read_document": "local2.documents.read",
    "render_passages": "local2.documents.passages",
    "truncate_paragraphs": "local2.documents.extract",
}
__getattr__ = lazy_face(__name__, _FACE)

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
