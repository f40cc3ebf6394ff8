"""The library of what was read (docs/library.md): research runs' sources and chat turns'
fetched pages, kept per person by content, searchable, exportable, and research's sources
when asked (``--sources library|both``)."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.library.archive import export_library as export_library
    from local2.library.archive import import_library as import_library
    from local2.library.index import as_document as as_document
    from local2.library.kept import Fetched as Fetched
    from local2.library.kept import Reader as Reader
    from local2.library.shelf import is_entry_id as is_entry_id
    from local2.library.store import ReadingLibrary as ReadingLibrary
    from local2.library.store import url_key as url_key
else:
    __getattr__ = lazy_face(__name__, __file__)
