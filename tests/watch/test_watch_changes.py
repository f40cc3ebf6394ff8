"""What changed between two runs of a watch, on reports made by research's own verify (the
real report format): new sources, sources gone, new and revised claims, claims no longer
supported, and "nothing new"."""

from __future__ import annotations

from local2.contracts import ResearchPayload
from local2.research import research_payload, source_list
from local2.research._state import Source
from local2.research._verify import report_markdown, verify
from local2.watch import notice_text, what_changed
from local2.watch._changes import SOURCES_GONE

QUESTION = "What is the state of the Kestrel solar plant?"
PLANT = "https://news.example.org/kestrel"
GRID = "https://grid.example.org/report/"
STORAGE = "https://storage.example.net/batteries"
PAGES = {
    PLANT: ("Kestrel plant opens", "The Kestrel plant produces 40 MW of power since 2024."),
    GRID: ("Grid report", "The Kestrel plant feeds the Northern grid through two lines."),
    STORAGE: ("Battery news", "Kestrel added a battery bank of 12 MWh in March."),
}


def run(pages: dict[str, tuple[str, str]], draft: str) -> ResearchPayload:
    """A finished run's payload: ``draft`` verified against ``pages`` (numbered in order)."""
    ledger: list[Source] = [
        {
            "n": n,
            "url": url,
            "title": title,
            "text": text,
            "kind": "page",
            "found_at": 0.0,
            "read_at": 0.0,
            "step": "s1",
        }
        for n, (url, (title, text)) in enumerate(pages.items(), 1)
    ]
    checked = verify(draft, ledger, QUESTION)
    references = checked.references(ledger)
    return research_payload(
        {
            "question": QUESTION,
            "report": report_markdown(QUESTION, checked, references),
            "sources": source_list(references),
            "unsupported": [u.as_dict() for u in checked.unsupported],
        }
    )


FIRST = run(
    {PLANT: PAGES[PLANT], GRID: PAGES[GRID]},
    "The Kestrel plant produces 40 MW of power [1]. "
    "It feeds the Northern grid through two lines [2].",
)


def test_the_first_run_is_all_new() -> None:
    changes = what_changed(None, FIRST)
    assert changes["first_run"] and not changes["nothing_new"]
    assert [s["url"] for s in changes["new_sources"]] == [PLANT, GRID]
    assert [c["claim"] for c in changes["new_claims"]] == [
        "The Kestrel plant produces 40 MW of power.",
        "It feeds the Northern grid through two lines.",
    ]
    assert changes["new_claims"][0]["sources"] == [PLANT]


def test_the_same_run_again_is_nothing_new_even_cited_in_another_order() -> None:
    again = run(
        {GRID: PAGES[GRID], PLANT: PAGES[PLANT]},
        "It feeds the Northern grid through two lines [1]. "
        "The Kestrel plant produces 40 MW of power [2].",
    )
    same_url_spelled_otherwise = run(
        {PLANT + "#top": PAGES[PLANT], GRID.rstrip("/"): PAGES[GRID]},
        "The Kestrel plant produces 40 MW of power [1]. "
        "It feeds the Northern grid through two lines [2].",
    )
    for second in (again, same_url_spelled_otherwise):
        changes = what_changed(FIRST, second)
        assert changes["nothing_new"], changes
        assert not changes["first_run"]
    title, body = notice_text(QUESTION, what_changed(FIRST, again), "http://127.0.0.1/r/2")
    assert title.endswith(": nothing new") and "Nothing changed" in body


def test_a_new_source_and_a_changed_figure_are_reported_exactly() -> None:
    pages = {
        PLANT: ("Kestrel plant opens", "The Kestrel plant produces 45 MW of power since 2024."),
        GRID: PAGES[GRID],
        STORAGE: PAGES[STORAGE],
    }
    second = run(
        pages,
        "The Kestrel plant produces 45 MW of power [1]. "
        "It feeds the Northern grid through two lines [2]. "
        "Kestrel added a battery bank of 12 MWh in March [3].",
    )
    changes = what_changed(FIRST, second)
    assert [s["url"] for s in changes["new_sources"]] == [STORAGE]
    assert [c["claim"] for c in changes["new_claims"]] == [
        "Kestrel added a battery bank of 12 MWh in March."
    ]
    [revised] = changes["revised_claims"]
    assert revised["before"]["claim"] == "The Kestrel plant produces 40 MW of power."
    assert revised["after"]["claim"] == "The Kestrel plant produces 45 MW of power."
    assert changes["sources_gone"] == [] and changes["no_longer_supported"] == []
    title, body = notice_text(QUESTION, changes, "http://127.0.0.1/r/2")
    assert "1 new source, 1 new claim, 1 revised claim" in title
    assert "(was: The Kestrel plant produces 40 MW of power.)" in body


def test_a_source_gone_takes_its_claim_with_it() -> None:
    second = run({PLANT: PAGES[PLANT]}, "The Kestrel plant produces 40 MW of power [1].")
    changes = what_changed(FIRST, second)
    assert [s["url"] for s in changes["sources_gone"]] == [GRID]
    [withdrawn] = changes["no_longer_supported"]
    assert withdrawn["claim"] == "It feeds the Northern grid through two lines."
    assert withdrawn["reason"] == SOURCES_GONE and withdrawn["sources"] == [GRID]
    assert changes["new_claims"] == [] and changes["revised_claims"] == []


def test_a_claim_the_sources_no_longer_support_is_named_with_verifys_reason() -> None:
    pages = {
        PLANT: PAGES[PLANT],
        GRID: ("Grid report", "The Kestrel plant was cut off from the Northern grid in May."),
    }
    second = run(
        pages,
        "The Kestrel plant produces 40 MW of power [1]. "
        "It feeds the Northern grid through two lines [2].",
    )
    assert second["unsupported"], "verify removed the claim the page no longer makes"
    changes = what_changed(FIRST, second)
    [withdrawn] = changes["no_longer_supported"]
    assert withdrawn["claim"] == "It feeds the Northern grid through two lines."
    assert withdrawn["reason"] == second["unsupported"][0]["reason"]
    assert changes["sources_gone"] == [] and changes["new_claims"] == []
