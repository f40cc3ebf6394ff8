"""Fixtures of the tests of the HTTP API and its server: a fixture two or more of this folder's
modules use goes here (one only its module uses stays there; tests/conftest.py has what every
folder shares, tests/kit/ and this folder's helpers modules what is not a fixture)."""
