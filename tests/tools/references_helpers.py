"""What the export tests share: the cited sources of one report (a preprint, a paper, a web
page, a retracted work, an undated page...), each with its record."""

from __future__ import annotations

from datetime import UTC, datetime

from local2.contracts import CitedSource, SourceMeta, web_meta
from local2.tools._scholarly.hit import ScholarlyHit

READ_AT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC).timestamp()


def meta(**known: object) -> SourceMeta:
    record = web_meta(str(known.pop("provider", "arxiv")), "paper")
    record.update(known)  # type: ignore[typeddict-item]  # the test's own fields
    return record


def sources() -> list[CitedSource]:
    preprint = ScholarlyHit(
        title="Sparse Attention for Long Clinical Notes",
        url="https://arxiv.org/abs/2403.01234",
        snippet="",
        provider="arxiv",
        kind="preprint",
        published="2024-03-02",
        authors=("Ada Lovelace", "Grace Hopper"),
        venue="arXiv",
        doi="10.1000/jml.2024.77",
        arxiv_id="2403.01234",
        pdf_url="https://arxiv.org/pdf/2403.01234v2",
        open_access=True,
        peer_reviewed=False,
    )
    return [
        CitedSource(
            n=1,
            title=preprint.title,
            url=preprint.url,
            kind="page",
            read_at=READ_AT,
            page=3,
            meta=preprint.meta(),
        ),
        CitedSource(
            n=2,
            title="Hydroxychloroquine or chloroquine with or without a macrolide",
            url="https://doi.org/10.1016/s0140-6736(20)31180-6",
            kind="result",
            read_at=None,
            page=None,
            meta=meta(
                provider="crossref",
                published="2020-05",
                authors=["Mandeep R Mehra", "Sleep Study Group"],
                venue="The Lancet",
                doi="10.1016/s0140-6736(20)31180-6",
                pmid="32450107",
                retracted=True,
            ),
        ),
        CitedSource(
            n=3,
            title="Sleep & memory: {50%} of $costs}\n@misc{evil,",
            url="https://www.sleep.example/news?a=1&b=2",
            kind="page",
            read_at=READ_AT,
            page=None,
        ),
        CitedSource(
            n=4,
            title="Sparse attention, revisited",
            url="https://arxiv.org/abs/2405.00007",
            kind="result",
            read_at=None,
            page=None,
            meta=meta(published="2024-05-01", authors=["Ada Lovelace"]),
        ),
    ]
