"""Test doubles that speak real protocols: a fake Ollama server and its scripted brains.

They live in the package (not under ``tests/``) because the story runner, the benchmarks and
the notebooks use them too, so a machine without Ollama can still run the whole stack.
"""
