from .document_lines import DocumentLines as DocumentLines
from .document_lines import kept_lines as kept_lines
from .document_lines import read_lines as read_lines
from .folders import FileView as FileView
from .folders import Folders as Folders
from .hybrid import SearchHit as SearchHit
from .index import FileIndex as FileIndex
from .index import Progress as Progress
from .index import SyncReport as SyncReport
from .own_documents import OwnDocuments as OwnDocuments
from .reading import DocumentReader as DocumentReader
from .reading import Documents as Documents
from .reading import ReadDocument as ReadDocument
from .sandbox import DOCUMENT_SUFFIXES as DOCUMENT_SUFFIXES
from .sandbox import UNREADABLE as UNREADABLE
from .sandbox import FileRef as FileRef
from .sandbox import Root as Root
from .sandbox import Sandbox as Sandbox
from .sandbox import file_id as file_id
from .sandbox import human_size as human_size

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
