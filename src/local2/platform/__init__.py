"""LoCAL2 on LangGraph Server (``langgraph.json``): the graph with the platform's own
checkpointer and store (a surface: docs/architecture.md)."""
