"""Model backends and what small models write: text tool calls and the keyword router."""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
