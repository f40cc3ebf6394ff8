__version__: str

from .config import load_settings as load_settings
from .service import Agent as Agent
from .service import build_graph as build_graph
from .service import build_research_graph as build_research_graph

__all__ = [
    "Agent",
    "build_graph",
    "build_research_graph",
    "load_settings",
]
