"""Tests of memory: facts, recall, embeddings, the store."""
