"""Settings: shipped YAML defaults, a config directory, the environment."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.config.edit import FILES_YAML as FILES_YAML
    from local2.config.edit import add_root as add_root
    from local2.config.loader import config_dir_from_env as config_dir_from_env
    from local2.config.loader import deep_merge as deep_merge
    from local2.config.loader import load_settings as load_settings
    from local2.config.logs import quiet_logging as quiet_logging
    from local2.config.schema import BackendName as BackendName
    from local2.config.schema import CriticRubric as CriticRubric
    from local2.config.schema import CriticSettings as CriticSettings
    from local2.config.schema import DocumentsSettings as DocumentsSettings
    from local2.config.schema import GeneratorSettings as GeneratorSettings
    from local2.config.schema import LibrarySettings as LibrarySettings
    from local2.config.schema import McpServer as McpServer
    from local2.config.schema import MemorySettings as MemorySettings
    from local2.config.schema import ResearchSettings as ResearchSettings
    from local2.config.schema import Settings as Settings
    from local2.config.schema import ToolSchema as ToolSchema
    from local2.config.schema import ToolsSettings as ToolsSettings
    from local2.config.schema import WatchSettings as WatchSettings
    from local2.config.schema import WebFetchSettings as WebFetchSettings
    from local2.config.schema import WebSearchSettings as WebSearchSettings
    from local2.config.schema import WebSettings as WebSettings
    from local2.config.search_registry import ProviderSettings as ProviderSettings
    from local2.config.search_registry import provider_names as provider_names
    from local2.config.search_registry import provider_settings as provider_settings
    from local2.config.search_registry import register_settings as register_settings
    from local2.config.search_registry import unregister_settings as unregister_settings
    from local2.errors import SettingsError as SettingsError
else:
    __getattr__ = lazy_face(__name__, __file__)
