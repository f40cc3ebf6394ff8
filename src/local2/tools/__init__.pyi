from ._base import Started as Started
from ._base import Tool as Tool
from ._base import ToolContext as ToolContext
from ._base import ToolResult as ToolResult
from ._base import ToolRunner as ToolRunner
from ._base import configured_tool as configured_tool
from ._base import declare as declare
from ._search import Precheck as Precheck
from ._search import ProviderSpec as ProviderSpec
from ._search import auto_reasons as auto_reasons
from ._search import make_chain as make_chain
from ._search import provider_spec as provider_spec
from ._search import provider_specs as provider_specs
from ._search import register_provider as register_provider
from ._search import unregister_provider as unregister_provider
from ._web_fetch import RESULT_HEAD as RESULT_HEAD
from ._web_fetch import LibraryKeeper as LibraryKeeper
from .corpus.documents import CorpusDocument as CorpusDocument
from .corpus.documents import folder_files as folder_files
from .corpus.documents import json_lines as json_lines
from .corpus.documents import pydantic_problem as pydantic_problem
from .corpus.documents import read_folder as read_folder
from .corpus.documents import reading as reading
from .corpus.documents import write_documents as write_documents
from .corpus.index import CorpusIndex as CorpusIndex
from .corpus.index import open_corpus as open_corpus
from .fallback import quoted as quoted
from .library_tools import LIBRARY_EMPTY as LIBRARY_EMPTY
from .library_tools import library_sourced as library_sourced
from .mcp import load_mcp_tools as load_mcp_tools
from .mcp import shutdown_mcp as shutdown_mcp
from .memory_tools import format_hit as format_hit
from .registry import built_in_schemas as built_in_schemas
from .registry import default_tools as default_tools
from .registry import register_tools as register_tools
from .registry import unregister_tools as unregister_tools
from .routing import route as route
from .scholarly import SCHOLARLY_SOURCES as SCHOLARLY_SOURCES
from .scholarly import Scope as Scope
from .scholarly import parse_day as parse_day
from .scholarly import parse_scope as parse_scope
from .scholarly import parse_sources as parse_sources
from .search.corpus import CorpusSettings as CorpusSettings
from .search_failures import BAD_REPLY as BAD_REPLY
from .search_failures import DOCTOR as DOCTOR
from .search_failures import HTTP_STATUS as HTTP_STATUS
from .search_failures import NO_NETWORK as NO_NETWORK
from .search_failures import TIMEOUT as TIMEOUT
from .search_failures import cause_of as cause_of
from .search_failures import lasting_of as lasting_of
from .sourced_search import OUT_OF_SCOPE as OUT_OF_SCOPE
from .sourced_search import SourcedSearch as SourcedSearch
from .sourced_search import sourced_tools as sourced_tools
from .trust import review as review
from .web import web_tools as web_tools

__all__ = [
    "BAD_REPLY",
    "DOCTOR",
    "HTTP_STATUS",
    "LIBRARY_EMPTY",
    "NO_NETWORK",
    "OUT_OF_SCOPE",
    "RESULT_HEAD",
    "SCHOLARLY_SOURCES",
    "TIMEOUT",
    "CorpusDocument",
    "CorpusIndex",
    "CorpusSettings",
    "LibraryKeeper",
    "Precheck",
    "ProviderSpec",
    "Scope",
    "SourcedSearch",
    "Started",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolRunner",
    "auto_reasons",
    "built_in_schemas",
    "cause_of",
    "configured_tool",
    "declare",
    "default_tools",
    "folder_files",
    "format_hit",
    "json_lines",
    "lasting_of",
    "library_sourced",
    "load_mcp_tools",
    "make_chain",
    "open_corpus",
    "parse_day",
    "parse_scope",
    "parse_sources",
    "provider_spec",
    "provider_specs",
    "pydantic_problem",
    "quoted",
    "read_folder",
    "reading",
    "register_provider",
    "register_tools",
    "review",
    "route",
    "shutdown_mcp",
    "sourced_tools",
    "unregister_provider",
    "unregister_tools",
    "web_tools",
    "write_documents",
]
