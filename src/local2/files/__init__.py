"""Local knowledge: the file sandbox and the search_files index."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.files.document_lines import DocumentLines as DocumentLines
    from local2.files.document_lines import kept_lines as kept_lines
    from local2.files.document_lines import read_lines as read_lines
    from local2.files.folders import FileView as FileView
    from local2.files.folders import Folders as Folders
    from local2.files.hybrid import SearchHit as SearchHit
    from local2.files.index import FileIndex as FileIndex
    from local2.files.index import Progress as Progress
    from local2.files.index import SyncReport as SyncReport
    from local2.files.own_documents import OwnDocuments as OwnDocuments
    from local2.files.reading import DocumentReader as DocumentReader
    from local2.files.reading import Documents as Documents
    from local2.files.reading import ReadDocument as ReadDocument
    from local2.files.sandbox import DOCUMENT_SUFFIXES as DOCUMENT_SUFFIXES
    from local2.files.sandbox import UNREADABLE as UNREADABLE
    from local2.files.sandbox import FileRef as FileRef
    from local2.files.sandbox import Root as Root
    from local2.files.sandbox import Sandbox as Sandbox
    from local2.files.sandbox import file_id as file_id
    from local2.files.sandbox import human_size as human_size
else:
    __getattr__ = lazy_face(__name__, __file__)
