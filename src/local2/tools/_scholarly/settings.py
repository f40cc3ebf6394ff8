"""The scholarly providers' settings, as the providers import them: the ``scholarly:``
settings block (``local2/config/_scholarly.py``, shipped in ``scholarly.yaml``)."""

from local2.config import (
    ApiSettings,
    ArxivSettings,
    CrossrefSettings,
    OpenAlexSettings,
    PubmedSettings,
    ScholarlySettings,
    SemanticScholarSettings,
    WikipediaSettings,
)

__all__ = [
    "ApiSettings",
    "ArxivSettings",
    "CrossrefSettings",
    "OpenAlexSettings",
    "PubmedSettings",
    "ScholarlySettings",
    "SemanticScholarSettings",
    "WikipediaSettings",
]
