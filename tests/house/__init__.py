"""Tests of the house's own rules: architecture, docs, errors, storage, start-up."""
