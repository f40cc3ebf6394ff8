"""Settings: shipped YAML defaults, a config directory, the environment."""

from local2.config.loader import SettingsError, load_settings
from local2.config.schema import Settings

__all__ = ["Settings", "SettingsError", "load_settings"]
