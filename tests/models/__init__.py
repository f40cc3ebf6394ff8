"""Tests of chat models: Ollama, the embedded model, OpenAI, tool-call parsing."""
