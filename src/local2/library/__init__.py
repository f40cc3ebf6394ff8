"""The library of what was read (docs/library.md): research runs' sources and chat turns'
fetched pages, kept per person by content, searchable, exportable, and research's sources
when asked (``--sources library|both``)."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Fetched": "local2.library.kept",
    "Reader": "local2.library.kept",
    "ReadingLibrary": "local2.library.store",
    "url_key": "local2.library.store",
    "export_library": "local2.library.archive",
    "import_library": "local2.library.archive",
    "is_entry_id": "local2.library.shelf",
    "as_document": "local2.library.index",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "Fetched",
    "Reader",
    "ReadingLibrary",
    "as_document",
    "export_library",
    "import_library",
    "is_entry_id",
    "url_key",
]
