"""Tests of the HTTP API and LangGraph Server."""
