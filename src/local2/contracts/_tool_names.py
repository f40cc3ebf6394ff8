"""The built-in tools' names, each written once: the tools declare themselves by these
(their schema and description beside their code, in ``local2.tools``), and the graph,
research, storage and the surfaces match a tool call by them."""

from __future__ import annotations

WEB_SEARCH = "web_search"
WEB_FETCH = "web_fetch"
SEARCH_LIBRARY = "search_library"
RECALL_MEMORY = "recall_memory"
SAVE_MEMORY = "save_memory"
READ_FILE = "read_file"
LIST_FILES = "list_files"
GREP_FILES = "grep_files"
DIRECTORY_TREE = "directory_tree"
FILE_METADATA = "file_metadata"
SEARCH_FILES = "search_files"

BUILT_IN = (
    WEB_SEARCH,
    WEB_FETCH,
    SEARCH_LIBRARY,
    RECALL_MEMORY,
    SAVE_MEMORY,
    READ_FILE,
    LIST_FILES,
    GREP_FILES,
    DIRECTORY_TREE,
    FILE_METADATA,
    SEARCH_FILES,
)
