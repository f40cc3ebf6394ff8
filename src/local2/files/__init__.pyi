from ._document_lines import DocumentLines as DocumentLines
from ._document_lines import kept_lines as kept_lines
from ._document_lines import read_lines as read_lines
from ._folders import FileView as FileView
from ._folders import Folders as Folders
from ._index import FileIndex as FileIndex
from ._index import Progress as Progress
from ._index import SearchHit as SearchHit
from ._index import SyncReport as SyncReport
from ._own_documents import OwnDocuments as OwnDocuments
from ._reading import DocumentReader as DocumentReader
from ._reading import Documents as Documents
from ._reading import ReadDocument as ReadDocument
from ._sandbox import DOCUMENT_SUFFIXES as DOCUMENT_SUFFIXES
from ._sandbox import UNREADABLE as UNREADABLE
from ._sandbox import FileRef as FileRef
from ._sandbox import Root as Root
from ._sandbox import Sandbox as Sandbox
from ._sandbox import file_id as file_id
from ._sandbox import human_size as human_size

__all__ = [
    "DOCUMENT_SUFFIXES",
    "UNREADABLE",
    "DocumentLines",
    "DocumentReader",
    "Documents",
    "FileIndex",
    "FileRef",
    "FileView",
    "Folders",
    "OwnDocuments",
    "Progress",
    "ReadDocument",
    "Root",
    "Sandbox",
    "SearchHit",
    "SyncReport",
    "file_id",
    "human_size",
    "kept_lines",
    "read_lines",
]
