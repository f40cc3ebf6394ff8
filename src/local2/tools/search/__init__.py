"""The search providers, one module each: a module here registers its provider
(:func:`local2.tools._search.register_provider`) when imported, and the settings
import every module here the first time they check ``web.search``
(:mod:`local2.config._search_registry`). Adding a provider is adding a module here: see
docs/architecture.md, "A web search provider".
"""
