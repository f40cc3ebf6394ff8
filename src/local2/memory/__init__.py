"""Long-term memory: the engram store on Chroma (``store``) and its embedders (``embeddings``).

Import from the submodules; this package stays light so the CLI starts quickly.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
