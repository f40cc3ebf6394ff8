from .archive import export_library as export_library
from .archive import import_library as import_library
from .index import as_document as as_document
from .kept import Fetched as Fetched
from .kept import Reader as Reader
from .shelf import is_entry_id as is_entry_id
from .store import ReadingLibrary as ReadingLibrary
from .store import url_key as url_key

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
