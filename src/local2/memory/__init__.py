"""Long-term memory: the engram store on Chroma (``store``) and its embedders (``embeddings``).

Import from the submodules; this package stays light so the CLI starts quickly.
"""
