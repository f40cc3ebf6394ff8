"""The scholarly sources' settings (``scholarly.yaml``, docs/research.md "Sources"): where
each API is, its key (named by environment variable, read when a call is made, never stored,
logged or shown), its page size and the pause its terms ask for between calls.

The defaults are the public APIs; a test or a mirror points ``base_url`` elsewhere.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Strict(BaseModel):
    """A settings block that refuses keys it does not know (as schema.py's)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ApiSettings(Strict):
    """What every provider has: its base URL, a deadline per call, a cap on an answer's
    bytes, how many hits one call asks for, and the least pause between two calls."""

    base_url: str
    timeout_s: float = Field(20.0, gt=0)
    max_bytes: int = Field(5_000_000, ge=1024)
    page_size: int = Field(25, ge=1, le=100)
    min_interval_s: float = Field(0.0, ge=0)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        # refused when the settings are read, not at the first search
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https:// (got {value!r})")
        return value


class ArxivSettings(ApiSettings):
    # arXiv's terms: no more than one request every three seconds, one connection at a time.
    base_url: str = "https://export.arxiv.org/api/query"
    min_interval_s: float = Field(3.0, ge=3.0)


class PubmedSettings(ApiSettings):
    # NCBI: 3 requests a second without a key, 10 with one (NCBI_API_KEY); tool and email
    # name this program to NCBI, as its usage guidelines ask.
    base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    api_key_env: str = "NCBI_API_KEY"
    tool: str = "local2"
    email: str | None = None
    datetype: Literal["pdat", "edat", "mdat"] = "pdat"  # publication date by default


class SemanticScholarSettings(ApiSettings):
    base_url: str = "https://api.semanticscholar.org/graph/v1"
    api_key_env: str = "SEMANTIC_SCHOLAR_API_KEY"  # optional: x-api-key
    min_interval_s: float = Field(1.0, ge=0)  # a key's introductory rate is one a second


class OpenAlexSettings(ApiSettings):
    # Needs a (free) key since 2026-02-13: without one OpenAlex is left out with a notice.
    base_url: str = "https://api.openalex.org"
    api_key_env: str = "OPENALEX_API_KEY"
    min_interval_s: float = Field(0.1, ge=0)


class CrossrefSettings(ApiSettings):
    # The polite pool: a mailto in each request; the pause follows x-rate-limit-* headers.
    base_url: str = "https://api.crossref.org"
    mailto: str | None = None
    plus_token_env: str = "CROSSREF_PLUS_API_TOKEN"
    min_interval_s: float = Field(0.02, ge=0)


class WikipediaSettings(ApiSettings):
    # The Action API (list=search): snippets, the last edit's time and paging by sroffset.
    base_url: str = "https://{lang}.wikipedia.org/w/api.php"
    article_url: str = "https://{lang}.wikipedia.org/wiki/{title}"
    language: str = Field("en", pattern=r"^[a-z][a-z0-9-]{1,15}$")
    page_size: int = Field(10, ge=1, le=100)


class ScholarlySettings(Strict):
    """The scholarly sources (``--sources arxiv,pubmed,...``) and how they are asked."""

    user_agent: str = "LoCAL2/0.1 (local research assistant)"
    retry_backoff_s: float = Field(2.0, ge=0)  # before the one retry, when no Retry-After
    max_backoff_s: float = Field(30.0, ge=0)  # the longest Retry-After waited for
    arxiv: ArxivSettings = Field(default_factory=ArxivSettings)
    pubmed: PubmedSettings = Field(default_factory=PubmedSettings)
    semantic_scholar: SemanticScholarSettings = Field(default_factory=SemanticScholarSettings)
    openalex: OpenAlexSettings = Field(default_factory=OpenAlexSettings)
    crossref: CrossrefSettings = Field(default_factory=CrossrefSettings)
    wikipedia: WikipediaSettings = Field(default_factory=WikipediaSettings)
