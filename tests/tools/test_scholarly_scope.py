"""A run's scope in time and place (issue 56): what a person types parsed into a ``Scope``
or refused with a message that says what was wrong and what is accepted, and the scope
applied to hits (a hit outside it dropped with why, an undated one kept and counted)."""

from __future__ import annotations

from datetime import date

import pytest

from local2.errors import InvalidInput
from local2.tools._scholarly.hit import ScholarlyHit, date_parts, date_span, from_web_hit, iso_date
from local2.tools._scholarly.scope import Scope, apply_scope, outside, parse_scope
from local2.tools._search import SearchHit

TODAY = date(2025, 3, 31)


def paper(url: str, published: str | None, **more: str) -> ScholarlyHit:
    return ScholarlyHit(title="t", url=url, snippet="s", provider="x", published=published, **more)


def test_dates_are_read_as_precise_as_written() -> None:
    scope = parse_scope("2024-03-05", "2024-06", today=TODAY)
    assert (scope.since, scope.until) == (date(2024, 3, 5), date(2024, 6, 30))
    # a year alone: its first day for --since, its last for --until
    scope = parse_scope("2020", "2021", today=TODAY)
    assert (scope.since, scope.until) == (date(2020, 1, 1), date(2021, 12, 31))
    assert parse_scope(until="2024-02", today=TODAY).until == date(2024, 2, 29)  # a leap year


def test_past_week_month_year_count_back_from_today() -> None:
    assert parse_scope("past week", today=TODAY).since == date(2025, 3, 24)
    assert parse_scope("Past  Month", today=TODAY).since == date(2025, 2, 28)  # no Feb 31st
    assert parse_scope("last 2 years", today=TODAY).since == date(2023, 3, 31)
    assert parse_scope("past 3 days", today=TODAY).since == date(2025, 3, 28)
    assert not parse_scope(today=TODAY).timed


@pytest.mark.parametrize(
    ("since", "until", "said", "fix"),
    [
        ("2024-13-01", None, "--since '2024-13-01' is not a date of the calendar", "2024-03-05"),
        ("2024-02-30", None, "not a date of the calendar", "past week"),
        ("yesterday", None, "--since 'yesterday' is not a date", "past month"),
        (None, "03/05/2024", "--until '03/05/2024' is not a date", "2024-03"),
        ("2025-01-01", "2024-12-31", "--since 2025-01-01 is after --until 2024-12-31", "on or"),
        (None, "past week", "'past ...' names where a window starts", "--since 'past week'"),
    ],
)
def test_bad_dates_are_refused_saying_what_is_accepted(
    since: str | None, until: str | None, said: str, fix: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_scope(since, until, today=TODAY)
    assert said in refused.value.message
    assert fix in refused.value.fix


def test_domains_are_normalised_and_bad_ones_refused() -> None:
    scope = parse_scope(domains="https://www.Nature.com/articles, arxiv.org,nature.com")
    assert scope.domains == ("nature.com", "arxiv.org")
    assert parse_scope(exclude_domains=["*.example.org"]).exclude_domains == ("example.org",)
    for bad in ("localhost", "not a domain", "-bad-.com"):
        with pytest.raises(InvalidInput) as refused:
            parse_scope(domains=bad)
        assert "is not a domain" in refused.value.message and "e.g. nature.com" in refused.value.fix
    with pytest.raises(InvalidInput, match="both in --domains and in --exclude-domains"):
        parse_scope(domains="nature.com", exclude_domains="www.nature.com")


def test_the_scope_drops_hits_outside_it_and_counts_the_undated() -> None:
    scope = parse_scope("2024-01-01", "2024-12-31", exclude_domains="predatory.example")
    hits = [
        paper("https://arxiv.org/abs/1", "2024-03-05"),
        paper("https://arxiv.org/abs/2", "2023-12-31"),
        paper("https://arxiv.org/abs/3", "2025-01"),
        paper("https://arxiv.org/abs/4", None),
        paper("https://arxiv.org/abs/5", "2024"),  # the year may mean a day in the window
        paper("https://doi.org/10.1/x", "2024-05-01", pdf_url="https://predatory.example/x.pdf"),
        SearchHit(title="web", url="https://news.example/a", snippet="s"),
    ]
    scoped = apply_scope(hits, scope)
    assert [h.url for h in scoped.kept] == [
        "https://arxiv.org/abs/1",
        "https://arxiv.org/abs/4",
        "https://arxiv.org/abs/5",
        "https://news.example/a",
    ]
    assert [why for _, why in scoped.dropped] == [
        "published 2023-12-31, before 2024-01-01",
        "published 2025-01, after 2024-12-31",
        "on predatory.example, which is excluded",
    ]
    assert scoped.undated == 2  # abs/4 and the web hit: nothing says they are outside


def test_only_these_domains_keeps_subdomains_and_any_address_of_the_work() -> None:
    scope = parse_scope(domains="nih.gov")
    on_pmc = paper(
        "https://doi.org/10.1/y", "2024", extra_urls=("https://pmc.ncbi.nlm.nih.gov/articles/P1/",)
    )
    assert outside(on_pmc, scope) is None
    assert outside(paper("https://arxiv.org/abs/1", "2024"), scope) == (
        "on arxiv.org, not one of nih.gov"
    )


def test_the_scope_says_itself_for_the_report() -> None:
    scope = parse_scope("2024-01-01", domains="arxiv.org", exclude_domains="example.com")
    assert scope.describe() == (
        "Sources published on or after 2024-01-01; only from arxiv.org; never from example.com."
    )
    assert Scope().describe() == ""


def test_iso_dates_from_what_the_apis_write() -> None:
    assert iso_date("2024-03-05T18:00:01Z") == "2024-03-05"
    assert iso_date("2024/3/5") == "2024-03-05"
    assert iso_date("2024") == "2024"
    assert iso_date("n.d.") is None and iso_date(None) is None
    assert date_parts([2024, 13]) == "2024" and date_parts([2024, 2, 30]) == "2024-02"
    assert date_parts([99]) is None and date_parts([]) is None
    assert date_span("2024-02") == (date(2024, 2, 1), date(2024, 2, 29))
    assert date_span("2024-12") == (date(2024, 12, 1), date(2024, 12, 31))
    assert date_span(None) is None


def test_a_web_hit_becomes_an_undated_record() -> None:
    hit = from_web_hit(SearchHit(title="t", url="https://a.example/", snippet="s"), "tavily")
    meta = hit.meta()
    assert meta["provider"] == "tavily" and meta["kind"] == "web"
    assert meta["published"] is None and meta["authors"] == [] and meta["retracted"] is None
