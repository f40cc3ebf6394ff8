from ._archive import export_library as export_library
from ._archive import import_library as import_library
from ._store import Fetched as Fetched
from ._store import Reader as Reader
from ._store import ReadingLibrary as ReadingLibrary
from ._store import as_document as as_document
from ._store import is_entry_id as is_entry_id
from ._store import url_key as url_key

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
