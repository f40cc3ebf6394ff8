"""Tests of research runs: plan, search, read, verify, steer."""
