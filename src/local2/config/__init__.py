"""Settings: shipped YAML defaults, a config directory, the environment."""

from local2.config.loader import load_settings
from local2.config.schema import Settings
from local2.errors import SettingsError
from local2.faces import lazy_face

__all__ = [
    "BackendName",
    "CriticRubric",
    "CriticSettings",
    "DocumentsSettings",
    "GeneratorSettings",
    "LibrarySettings",
    "McpServer",
    "MemorySettings",
    "ResearchSettings",
    "Settings",
    "SettingsError",
    "ToolsSettings",
    "WebFetchSettings",
    "WebSearchSettings",
    "WebSettings",
    "deep_merge",
    "load_settings",
    "shipped_tool_schemas",
]

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "BackendName": "local2.config.schema",
    "ResearchSettings": "local2.config.schema",
    "CriticRubric": "local2.config.schema",
    "CriticSettings": "local2.config.schema",
    "DocumentsSettings": "local2.config.schema",
    "GeneratorSettings": "local2.config.schema",
    "LibrarySettings": "local2.config.schema",
    "McpServer": "local2.config.schema",
    "MemorySettings": "local2.config.schema",
    "ToolsSettings": "local2.config.schema",
    "WebFetchSettings": "local2.config.schema",
    "WebSearchSettings": "local2.config.schema",
    "deep_merge": "local2.config.loader",
    "shipped_tool_schemas": "local2.config.loader",
    "WebSettings": "local2.config.schema",
}
__getattr__ = lazy_face(__name__, _FACE)
