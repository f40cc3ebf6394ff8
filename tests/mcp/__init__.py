"""Tests of the MCP server and MCP tools, with the clients hosts use."""
