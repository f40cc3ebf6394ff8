"""Tests of people and sign-in on a team server."""
