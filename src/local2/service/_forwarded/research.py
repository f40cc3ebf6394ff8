"""What the service's face forwards from :mod:`local2.research`."""

from local2.research import ResearchGraph, link_citations, plain, safe_url, why_found

__all__ = ["ResearchGraph", "link_citations", "plain", "safe_url", "why_found"]
