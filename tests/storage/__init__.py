"""Tests of storage: the stores, Chroma's server, a full disk."""
