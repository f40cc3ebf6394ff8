"""The library of what was read (docs/library.md): research runs' sources and chat turns'
fetched pages, kept per person by content, searchable, exportable, and research's sources
when asked (``--sources library|both``)."""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
