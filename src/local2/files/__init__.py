"""Local knowledge: the file sandbox and the search_files index."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "FileIndex": "local2.files.index",
    "FileRef": "local2.files.sandbox",
    "Sandbox": "local2.files.sandbox",
    "human_size": "local2.files.sandbox",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "FileIndex",
    "FileRef",
    "Sandbox",
    "human_size",
]
