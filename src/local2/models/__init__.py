"""Model backends and what small models write: text tool calls and the keyword router."""
