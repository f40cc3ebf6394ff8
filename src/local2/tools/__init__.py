"""The tools the model may call: each one carries its schema, its description (from
``generator.yaml``) and what else is known about it; :mod:`.registry` lists the defaults."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "library_sourced": "local2.tools.library_tools",
    "LibraryKeeper": "local2.tools.library_keep",
    "web_tools": "local2.tools.web",
    "Started": "local2.tools.runner",
    "Tool": "local2.tools.base",
    "ToolContext": "local2.tools.base",
    "ToolResult": "local2.tools.base",
    "ToolRunner": "local2.tools.runner",
    "auto_reasons": "local2.tools.search_chain",
    "default_tools": "local2.tools.registry",
    "format_hit": "local2.tools.memory_tools",
    "load_mcp_tools": "local2.tools.mcp",
    "quoted": "local2.tools.fallback",
    "review": "local2.tools.trust",
    "route": "local2.tools.routing",
    "shutdown_mcp": "local2.tools.mcp",
    "CorpusIndex": "local2.tools.corpus.index",
    "Document": "local2.tools.corpus.documents",
    "folder_files": "local2.tools.corpus.documents",
    "json_lines": "local2.tools.corpus.documents",
    "open_corpus": "local2.tools.corpus.index",
    "pydantic_problem": "local2.tools.corpus.documents",
    "read_folder": "local2.tools.corpus.documents",
    "reading": "local2.tools.corpus.documents",
    "write_documents": "local2.tools.corpus.documents",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "CorpusIndex",
    "Document",
    "LibraryKeeper",
    "Started",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolRunner",
    "auto_reasons",
    "default_tools",
    "folder_files",
    "format_hit",
    "json_lines",
    "library_sourced",
    "load_mcp_tools",
    "open_corpus",
    "pydantic_problem",
    "quoted",
    "read_folder",
    "reading",
    "review",
    "route",
    "shutdown_mcp",
    "web_tools",
    "write_documents",
]
