"""Documents built to hurt a reader: each is refused with a message naming the limit it
broke, within that limit (its memory under 200 MB above the reader's own, measured as the
worker's peak resident memory), and the next document reads as usual.

They go through the real bounded worker; the hostile files are made at test time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from local2.bounded._workers import WorkerPool
from local2.config._schema import DocumentsSettings
from local2.documents._read import Reading, measure_reading, read_document
from local2.errors import DocumentUnreadable
from local2_testkit import hostile_documents as hostile
from local2_testkit.documents import Sample, docx_sample, one_column_pdf

CFG = DocumentsSettings(timeout_s=60)
MEMORY_ABOVE_BASELINE_MB = 200


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    workers = WorkerPool("local2.documents._job", "document reading")
    yield workers
    workers.close()


@pytest.fixture(scope="module")
def normal() -> bytes:
    return one_column_pdf().data


def words(text: str) -> str:
    return " ".join(text.split())


def baseline_mb(pool: WorkerPool, normal: bytes) -> float:
    """A normal document read first: the reader's resident memory when it arrived."""
    reading = measure_reading(normal, CFG, name="normal.pdf", pool=pool)
    assert reading.document is not None and reading.document.page_count == 3
    return reading.rss_before_mb


def refused(pool: WorkerPool, normal: bytes, data: bytes, name: str) -> DocumentUnreadable:
    """Read ``data`` after a normal document and before another; its error."""
    base = baseline_mb(pool, normal)
    reading: Reading = measure_reading(data, CFG, name=name, pool=pool)
    assert reading.error is not None, name
    assert reading.rss_peak_mb - base < MEMORY_ABOVE_BASELINE_MB, (name, base, reading)
    after = read_document(normal, CFG, name="normal.pdf", pool=pool)
    assert words(after.text()) == words(one_column_pdf().text)
    return reading.error


CASES: dict[str, tuple[Callable[[], bytes], str, str, str]] = {
    # name: (make, reason, words the message has, the setting it names)
    "bomb.pdf": (hostile.inflating_pdf, "memory", "160 MB of memory", "documents.memory_mb"),
    "many-pages.pdf": (
        hostile.many_pages_pdf,
        "too_many_pages",
        "100,000 pages, over the limit of 2,000",
        "documents.max_pages",
    ),
    "bomb.docx": (hostile.docx_bomb, "archive", "1,010 to 1", "documents.zip_max_ratio"),
    "bomb.epub": (hostile.epub_bomb, "archive", "1,010 to 1", "documents.zip_max_ratio"),
    "members.docx": (
        hostile.many_members_docx,
        "archive",
        "20,001 entries, over 10,000",
        "documents.zip_max_members",
    ),
    "encrypted.pdf": (hostile.encrypted_pdf, "encrypted", "needs a password", ""),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_document_is_refused_within_its_limit(
    name: str, pool: WorkerPool, normal: bytes
) -> None:
    make, reason, says, setting = CASES[name]
    error = refused(pool, normal, make(), name)
    assert error.reason == reason
    assert says in error.message
    assert setting in error.message and setting in error.fix


def test_a_zip_member_that_lies_about_its_size_stops_at_the_size_it_declared(
    pool: WorkerPool, normal: bytes
) -> None:
    """Declared 1,000 bytes, packed from 1 GiB: unpacked a chunk at a time, it stops at
    1,000 and fails its checksum (zipfile's one-call read inflated all of it: 2 GB, 9 s)."""
    error = refused(pool, normal, hostile.docx_bomb(1024, declared=1000), "liar.docx")
    assert error.reason == "corrupt" and "Bad CRC-32" in error.message


def test_deeply_nested_objects_are_read_or_refused_within_bounds(
    pool: WorkerPool, normal: bytes
) -> None:
    base = baseline_mb(pool, normal)
    reading = measure_reading(hostile.nested_pdf(), CFG, name="nested.pdf", pool=pool)
    assert reading.rss_peak_mb - base < MEMORY_ABOVE_BASELINE_MB
    if reading.error is None:  # PDFium caps its parser's depth and reads the page's text
        assert "Nested text" in reading.result().text()
    else:
        assert reading.error.reason == "corrupt"
    assert read_document(normal, CFG, name="normal.pdf", pool=pool).page_count == 3


@pytest.mark.parametrize(("name", "make"), [("cut.pdf", one_column_pdf), ("cut.docx", docx_sample)])
def test_truncated_file_is_corrupt(
    name: str, make: Callable[[], Sample], pool: WorkerPool, normal: bytes
) -> None:
    error = refused(pool, normal, hostile.truncated(make().data, 0.5), name)
    assert error.reason == "corrupt"
    assert "not a readable" in error.message and "truncated" in error.fix


def test_over_the_byte_cap_is_refused_unread(pool: WorkerPool, normal: bytes) -> None:
    spawned = pool.spawned
    with pytest.raises(DocumentUnreadable) as caught:
        read_document(normal, CFG.model_copy(update={"max_bytes": 10_000}), name="x.pdf", pool=pool)
    assert caught.value.reason == "too_large" and "documents.max_bytes" in str(caught.value)
    assert pool.spawned == spawned


def test_over_the_character_limit(pool: WorkerPool, normal: bytes) -> None:
    small = CFG.model_copy(update={"max_chars": 1000})
    with pytest.raises(DocumentUnreadable) as caught:
        read_document(normal, small, name="normal.pdf", pool=pool)
    assert caught.value.reason == "too_many_chars"
    assert "more than 1,000 characters" in caught.value.message
    assert "documents.max_chars" in caught.value.fix


def test_a_reading_over_its_time_is_stopped_and_names_the_limit(
    pool: WorkerPool, normal: bytes
) -> None:
    """The bomb takes seconds to inflate with room to do it; the deadline ends it first."""
    roomy = CFG.model_copy(update={"timeout_s": 0.3, "memory_mb": 4000})
    reading = measure_reading(hostile.inflating_pdf(4), roomy, name="slow.pdf", pool=pool)
    assert reading.error is not None and reading.error.reason == "timeout"
    assert "longer than 0.3 s" in reading.error.message
    assert "documents.timeout_s" in reading.error.fix
    assert read_document(normal, CFG, name="normal.pdf", pool=pool).page_count == 3


def test_unknown_format_is_refused_with_what_is_read(pool: WorkerPool) -> None:
    with pytest.raises(DocumentUnreadable) as caught:
        read_document(b"\x89PNG\r\n\x1a\n" + b"\0" * 100, CFG, name="photo.png", pool=pool)
    assert caught.value.reason == "unsupported"
    assert "PDF, DOCX, PPTX, ODT, EPUB" in caught.value.fix
