"""Settings: shipped YAML defaults, a config directory, the environment."""

from local2.config.loader import load_settings
from local2.config.schema import Settings
from local2.errors import SettingsError

__all__ = ["Settings", "SettingsError", "load_settings"]
