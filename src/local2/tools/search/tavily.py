"""Tavily through tavily-python: keyless, or a key in ``TAVILY_API_KEY`` (then ``auto``
tries it first)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from local2.config import ProviderSettings, WebSearchSettings
from local2.tools._search import (
    ProviderSpec,
    SearchHit,
    hits_from,
    key_of,
    register_provider,
    search_failed,
    search_timeout,
    tavily_params,
    when_key_set,
)
from local2.tools._search_failures import cannot_connect, detail_of, unavailable

KEY_ENV = "TAVILY_API_KEY"


class TavilySettings(ProviderSettings):
    tavily_url: str | None = None  # default: the client's own
    tavily_search_depth: Literal["basic", "advanced"] = "basic"


class TavilyProvider:
    """Tavily through tavily-python; keyless mode when ``TAVILY_API_KEY`` is unset."""

    name = "tavily"

    def __init__(self, timeout_s: float, base_url: str | None = None, search_depth: str = "basic"):
        self.timeout_s = timeout_s
        self.base_url = base_url
        self.search_depth = search_depth

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        # With the first search, not here: the settings import this module to learn its
        # keys, and tavily with requests is about 0.2 s of imports (python -X importtime).
        import requests
        from tavily import TavilyClient, errors

        key = key_of(KEY_ENV)
        try:
            client = TavilyClient(api_key=key, api_base_url=self.base_url)
        except errors.MissingAPIKeyError:  # clients older than keyless mode
            raise unavailable(
                "search unavailable: TAVILY_API_KEY is not set and this tavily-python "
                "has no keyless mode",
                "Export `TAVILY_API_KEY`, or set another provider in web.yaml (`search.provider`).",
            ) from None
        client.session.trust_env = False  # never route through an environment proxy
        try:
            data = client.search(
                query,
                max_results=max_results,
                search_depth=self.search_depth,
                timeout=self.timeout_s,
                **tavily_params(),  # a run's window and domains (web_scope)
            )
        except errors.TimeoutError as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except errors.InvalidAPIKeyError:
            raise search_failed(401, "TAVILY_API_KEY") from None
        except errors.TavilyKeylessLimitError:
            raise search_failed(
                429, hint="keyless Tavily limit reached: set TAVILY_API_KEY for more"
            ) from None
        except errors.UsageLimitExceededError:
            raise search_failed(429) from None
        except errors.ForbiddenError:
            raise search_failed(403) from None
        except errors.BadRequestError as exc:
            raise search_failed(400, hint=f"bad request: {str(exc)[:200]}") from None
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            raise search_failed(status) from None
        except requests.Timeout as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except requests.RequestException as exc:
            raise cannot_connect("Tavily", exc) from None
        finally:
            client.close()
        results = data.get("results") if isinstance(data, dict) else None
        return hits_from(results, "content", max_results)


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> TavilyProvider:
    own = cfg.of(TavilySettings)
    return TavilyProvider(cfg.timeout_s, own.tavily_url, own.tavily_search_depth)


SPEC = register_provider(
    ProviderSpec(
        "tavily", TavilySettings, _make, auto=when_key_set(KEY_ENV), rank=10, key_env=KEY_ENV
    )
)
