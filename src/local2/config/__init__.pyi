from ._edit import FILES_YAML as FILES_YAML
from ._edit import add_root as add_root
from ._loader import config_dir_from_env as config_dir_from_env
from ._loader import deep_merge as deep_merge
from ._loader import load_settings as load_settings
from ._logs import quiet_logging as quiet_logging
from ._schema import BackendName as BackendName
from ._schema import CriticRubric as CriticRubric
from ._schema import CriticSettings as CriticSettings
from ._schema import DocumentsSettings as DocumentsSettings
from ._schema import GeneratorSettings as GeneratorSettings
from ._schema import LibrarySettings as LibrarySettings
from ._schema import McpServer as McpServer
from ._schema import MemorySettings as MemorySettings
from ._schema import ResearchSettings as ResearchSettings
from ._schema import Settings as Settings
from ._schema import ToolSchema as ToolSchema
from ._schema import ToolsSettings as ToolsSettings
from ._schema import WatchSettings as WatchSettings
from ._schema import WebFetchSettings as WebFetchSettings
from ._schema import WebSearchSettings as WebSearchSettings
from ._schema import WebSettings as WebSettings
from ._scholarly import ApiSettings as ApiSettings
from ._scholarly import ArxivSettings as ArxivSettings
from ._scholarly import CrossrefSettings as CrossrefSettings
from ._scholarly import OpenAlexSettings as OpenAlexSettings
from ._scholarly import PubmedSettings as PubmedSettings
from ._scholarly import ScholarlySettings as ScholarlySettings
from ._scholarly import SemanticScholarSettings as SemanticScholarSettings
from ._scholarly import WikipediaSettings as WikipediaSettings
from ._search_registry import ProviderSettings as ProviderSettings
from ._search_registry import provider_names as provider_names
from ._search_registry import provider_settings as provider_settings
from ._search_registry import register_settings as register_settings
from ._search_registry import unregister_settings as unregister_settings

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
