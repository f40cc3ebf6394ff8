"""Tests of documents, the library of what was read, and folder search."""
