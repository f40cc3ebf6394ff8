"""What the service's face forwards from :mod:`local2.arena`."""

from local2.arena import Rating, arena, as_csv, as_json

__all__ = ["Rating", "arena", "as_csv", "as_json"]
