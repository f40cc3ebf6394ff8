"""Fixtures of the research tests: the loopback web of the extraction corpus, the scholarly APIs'
stand-in (a fixture two or more of this folder's modules use goes here; helpers that are not
fixtures are in helpers.py and sources_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.scholarly_stub import Stub
from tests.research.helpers import CORPUS
from tests.research.sources_helpers import scholarly_apis


@pytest.fixture(scope="module")
def pages() -> list[Any]:
    return load_pages(CORPUS)


@pytest.fixture
def web(pages: list[Any]) -> Iterator[LoopbackWeb]:
    with LoopbackWeb(pages) as served:
        yield served


@pytest.fixture
def apis() -> Iterator[Stub]:
    with scholarly_apis() as server:
        yield server
