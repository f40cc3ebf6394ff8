"""The tools the model may call: each one carries its schema, its description (from
``generator.yaml``) and what else is known about it; :mod:`.registry` lists the defaults."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.tools.base import Tool as Tool
    from local2.tools.base import ToolContext as ToolContext
    from local2.tools.base import ToolResult as ToolResult
    from local2.tools.base import configured_tool as configured_tool
    from local2.tools.base import declare as declare
    from local2.tools.corpus.documents import CorpusDocument as CorpusDocument
    from local2.tools.corpus.documents import folder_files as folder_files
    from local2.tools.corpus.documents import json_lines as json_lines
    from local2.tools.corpus.documents import pydantic_problem as pydantic_problem
    from local2.tools.corpus.documents import read_folder as read_folder
    from local2.tools.corpus.documents import reading as reading
    from local2.tools.corpus.documents import write_documents as write_documents
    from local2.tools.corpus.index import CorpusIndex as CorpusIndex
    from local2.tools.corpus.index import open_corpus as open_corpus
    from local2.tools.fallback import quoted as quoted
    from local2.tools.library_keep import LibraryKeeper as LibraryKeeper
    from local2.tools.library_tools import LIBRARY_EMPTY as LIBRARY_EMPTY
    from local2.tools.library_tools import library_sourced as library_sourced
    from local2.tools.mcp import load_mcp_tools as load_mcp_tools
    from local2.tools.mcp import shutdown_mcp as shutdown_mcp
    from local2.tools.memory_tools import format_hit as format_hit
    from local2.tools.registry import built_in_schemas as built_in_schemas
    from local2.tools.registry import default_tools as default_tools
    from local2.tools.registry import register_tools as register_tools
    from local2.tools.registry import unregister_tools as unregister_tools
    from local2.tools.routing import route as route
    from local2.tools.runner import Started as Started
    from local2.tools.runner import ToolRunner as ToolRunner
    from local2.tools.search.corpus import CorpusSettings as CorpusSettings
    from local2.tools.search_chain import auto_reasons as auto_reasons
    from local2.tools.search_chain import make_chain as make_chain
    from local2.tools.search_failures import BAD_REPLY as BAD_REPLY
    from local2.tools.search_failures import DOCTOR as DOCTOR
    from local2.tools.search_failures import HTTP_STATUS as HTTP_STATUS
    from local2.tools.search_failures import NO_NETWORK as NO_NETWORK
    from local2.tools.search_failures import TIMEOUT as TIMEOUT
    from local2.tools.search_failures import cause_of as cause_of
    from local2.tools.search_registry import Precheck as Precheck
    from local2.tools.search_registry import ProviderSpec as ProviderSpec
    from local2.tools.search_registry import provider_spec as provider_spec
    from local2.tools.search_registry import provider_specs as provider_specs
    from local2.tools.search_registry import register_provider as register_provider
    from local2.tools.search_registry import unregister_provider as unregister_provider
    from local2.tools.trust import review as review
    from local2.tools.web import web_tools as web_tools
else:
    __getattr__ = lazy_face(__name__, __file__)
