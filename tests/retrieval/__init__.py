"""Tests of retrieval: passages, support, the one retrieval part."""
