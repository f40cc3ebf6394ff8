"""Tests of the local2 command."""
