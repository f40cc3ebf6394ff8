from .edit import FILES_YAML as FILES_YAML
from .edit import add_root as add_root
from .loader import config_dir_from_env as config_dir_from_env
from .loader import deep_merge as deep_merge
from .loader import load_settings as load_settings
from .logs import quiet_logging as quiet_logging
from .schema import BackendName as BackendName
from .schema import CriticRubric as CriticRubric
from .schema import CriticSettings as CriticSettings
from .schema import DocumentsSettings as DocumentsSettings
from .schema import GeneratorSettings as GeneratorSettings
from .schema import LibrarySettings as LibrarySettings
from .schema import McpServer as McpServer
from .schema import MemorySettings as MemorySettings
from .schema import ResearchSettings as ResearchSettings
from .schema import Settings as Settings
from .schema import ToolSchema as ToolSchema
from .schema import ToolsSettings as ToolsSettings
from .schema import WatchSettings as WatchSettings
from .schema import WebFetchSettings as WebFetchSettings
from .schema import WebSearchSettings as WebSearchSettings
from .schema import WebSettings as WebSettings
from .scholarly import ApiSettings as ApiSettings
from .scholarly import ArxivSettings as ArxivSettings
from .scholarly import CrossrefSettings as CrossrefSettings
from .scholarly import OpenAlexSettings as OpenAlexSettings
from .scholarly import PubmedSettings as PubmedSettings
from .scholarly import ScholarlySettings as ScholarlySettings
from .scholarly import SemanticScholarSettings as SemanticScholarSettings
from .scholarly import WikipediaSettings as WikipediaSettings
from .search_registry import ProviderSettings as ProviderSettings
from .search_registry import provider_names as provider_names
from .search_registry import provider_settings as provider_settings
from .search_registry import register_settings as register_settings
from .search_registry import unregister_settings as unregister_settings

__all__ = [
    "FILES_YAML",
    "ApiSettings",
    "ArxivSettings",
    "BackendName",
    "CriticRubric",
    "CriticSettings",
    "CrossrefSettings",
    "DocumentsSettings",
    "GeneratorSettings",
    "LibrarySettings",
    "McpServer",
    "MemorySettings",
    "OpenAlexSettings",
    "ProviderSettings",
    "PubmedSettings",
    "ResearchSettings",
    "ScholarlySettings",
    "SemanticScholarSettings",
    "Settings",
    "ToolSchema",
    "ToolsSettings",
    "WatchSettings",
    "WebFetchSettings",
    "WebSearchSettings",
    "WebSettings",
    "WikipediaSettings",
    "add_root",
    "config_dir_from_env",
    "deep_merge",
    "load_settings",
    "provider_names",
    "provider_settings",
    "quiet_logging",
    "register_settings",
    "unregister_settings",
]
