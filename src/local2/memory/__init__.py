"""Long-term memory: the engram store on Chroma and its embedders.

The modules are the package's own, one idea each: where each owner's memory lives and the
work that waits (:mod:`._owners`, with :mod:`.deferred`, the ratings and marks given while
memory is not open), what is remembered of a turn besides the turn (:mod:`._facts`), the
embedders (:mod:`._embedders`), the engram store (:mod:`._store`, the one that imports
chromadb), and memory per person and for the team (:mod:`._shelf`). This face is what other
packages use; it stays light (each name is loaded on first use) so the CLI starts quickly.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
