from ._base import Started as Started
from ._base import Tool as Tool
from ._base import ToolContext as ToolContext
from ._base import ToolResult as ToolResult
from ._base import ToolRunner as ToolRunner
from ._base import configured_tool as configured_tool
from ._base import declare as declare
from ._corpus.documents import CorpusDocument as CorpusDocument
from ._corpus.documents import folder_files as folder_files
from ._corpus.documents import json_lines as json_lines
from ._corpus.documents import pydantic_problem as pydantic_problem
from ._corpus.documents import read_folder as read_folder
from ._corpus.documents import reading as reading
from ._corpus.documents import write_documents as write_documents
from ._corpus.index import CorpusIndex as CorpusIndex
from ._corpus.index import open_corpus as open_corpus
from ._fallback import quoted as quoted
from ._library_tools import LIBRARY_EMPTY as LIBRARY_EMPTY
from ._library_tools import library_sourced as library_sourced
from ._mcp import load_mcp_tools as load_mcp_tools
from ._mcp import shutdown_mcp as shutdown_mcp
from ._memory_tools import format_hit as format_hit
from ._registry import built_in_schemas as built_in_schemas
from ._registry import default_tools as default_tools
from ._registry import register_tools as register_tools
from ._registry import unregister_tools as unregister_tools
from ._routing import route as route
from ._scholarly import SCHOLARLY_SOURCES as SCHOLARLY_SOURCES
from ._scholarly import Scope as Scope
from ._scholarly import parse_day as parse_day
from ._scholarly import parse_scope as parse_scope
from ._scholarly import parse_sources as parse_sources
from ._search import Precheck as Precheck
from ._search import ProviderSpec as ProviderSpec
from ._search import auto_reasons as auto_reasons
from ._search import make_chain as make_chain
from ._search import provider_spec as provider_spec
from ._search import provider_specs as provider_specs
from ._search import register_provider as register_provider
from ._search import unregister_provider as unregister_provider
from ._search_failures import BAD_REPLY as BAD_REPLY
from ._search_failures import DOCTOR as DOCTOR
from ._search_failures import HTTP_STATUS as HTTP_STATUS
from ._search_failures import NO_NETWORK as NO_NETWORK
from ._search_failures import TIMEOUT as TIMEOUT
from ._search_failures import cause_of as cause_of
from ._search_failures import lasting_of as lasting_of
from ._sourced_search import OUT_OF_SCOPE as OUT_OF_SCOPE
from ._sourced_search import SourcedSearch as SourcedSearch
from ._sourced_search import sourced_tools as sourced_tools
from ._trust import review as review
from ._web import web_tools as web_tools
from ._web_fetch import RESULT_HEAD as RESULT_HEAD
from ._web_fetch import LibraryKeeper as LibraryKeeper
from .search.corpus import CorpusSettings as CorpusSettings

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
