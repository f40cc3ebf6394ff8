"""Local knowledge: the file sandbox and the search_files index."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "FileIndex": "local2.files.index",
    "FileRef": "local2.files.sandbox",
    "Sandbox": "local2.files.sandbox",
    "human_size": "local2.files.sandbox",
    "Documents": "local2.files.reading",
    "DocumentReader": "local2.files.reading",
    "ReadDocument": "local2.files.reading",
    "Folders": "local2.files.folders",
    "FileView": "local2.files.folders",
    "Library": "local2.files.library",
    "DOCUMENT_SUFFIXES": "local2.files.sandbox",
    "UNREADABLE": "local2.files.sandbox",
    "DocumentLines": "local2.files.document_lines",
    "kept_lines": "local2.files.document_lines",
    "read_lines": "local2.files.document_lines",
    "Root": "local2.files.sandbox",
    "SearchHit": "local2.files.hybrid",
    "file_id": "local2.files.sandbox",
    "Progress": "local2.files.index",
    "SyncReport": "local2.files.index",
}
__getattr__ = lazy_face(__name__, _FACE)

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
    "Library",
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
