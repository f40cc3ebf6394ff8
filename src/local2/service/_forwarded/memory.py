"""What the service's face forwards from :mod:`local2.memory`."""

from local2.memory import owner_folder

__all__ = ["owner_folder"]
