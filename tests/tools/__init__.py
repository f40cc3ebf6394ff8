"""Tests of the agent's tools: web search and fetch, scholarly sources, guards."""
