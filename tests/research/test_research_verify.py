"""Verification: citations must resolve to the ledger, and what a sentence states must be in
the source it cites; references come from the ledger; URLs the model typed never link."""

from __future__ import annotations

from local2.research._state import Found, file_sources, page_read, search_hits
from local2.research._verify import (
    UNCITED,
    claims,
    link_citations,
    references_markdown,
    report_markdown,
    split_sentences,
    verify,
)

BRIDGE = (
    "Residents of Kelsby voted on Tuesday to repair the iron swing bridge that has crossed "
    "the harbour mouth since 1894. The repair plan passed with 61 percent of the vote and "
    "will cost 4,200,000 pounds."
)
OTTERS = "Volunteers found signs of otters at 78 of the 90 sites on the river Lune in 2026."


def ledger() -> list:
    found = [
        Found(
            url="https://news.example/bridge",
            title="Bridge vote",
            text=BRIDGE,
            kind="page",
            at=1.0,
            step="s2",
        ),
        Found(
            url="https://nature.example/otters",
            title="Otter count",
            text=OTTERS,
            kind="result",
            at=1.0,
            step="s1",
        ),
        Found(
            url="https://other.example/x",
            title="Unused",
            text="Nothing here.",
            kind="result",
            at=1.0,
            step="s1",
        ),
    ]
    entries, _ = file_sources([], found, max_sources=12)
    return entries


def test_supported_sentences_survive_and_others_are_listed_with_reasons() -> None:
    draft = (
        "Kelsby voted to repair its bridge, which dates from 1894 [1]. "
        "The plan passed with 61 percent of the vote [1]. "
        "The plan passed with 75 percent of the vote [1]. "
        "Otters were found at 78 of 90 sites on the Lune [2]. "
        "The council of Glasgow approved it [1]. "
        "A later study found 120 otters [7]."
    )
    checked = verify(draft, ledger(), "Why did Kelsby keep its bridge?")
    assert "1894 [1]" in checked.body and "61 percent" in checked.body
    assert "78 of 90" in checked.body
    assert "75 percent" not in checked.body and "Glasgow" not in checked.body
    assert "[7]" not in checked.body
    reasons = {u.sentence.split(" [")[0]: u.reason for u in checked.unsupported}
    assert (
        "'75' not in the cited source [1]" in reasons["The plan passed with 75 percent of the vote"]
    )
    assert "'Glasgow'" in reasons["The council of Glasgow approved it"]
    assert "[7], which no source" in reasons["A later study found 120 otters"]
    assert checked.cited == [1, 2]


def test_references_are_the_pages_read_plus_cited_results_never_typed_urls() -> None:
    entries = ledger()
    draft = (
        "The bridge dates from 1894 [1]. Read more at https://invented.example/story. "
        "See [the survey](https://nature.example/otters) for details. "
        "![chart](https://tracker.example/pixel.png) Otters were counted in 2026 [2]."
    )
    checked = verify(draft, entries, "")
    refs = checked.references(entries)
    assert [s["n"] for s in refs] == [1, 2]  # the page read, and the result cited
    assert "invented.example" not in checked.body
    assert "tracker.example" not in checked.body  # the image is gone, nothing auto-loads
    assert "See the survey [2] for details." in checked.body  # a ledger URL became a citation
    assert any("links to a page" in u.reason for u in checked.unsupported)
    assert checked.removed_links == ["https://invented.example/story"]
    markdown = report_markdown("Q?", checked, refs)
    assert "## References" in markdown and "https://news.example/bridge" in markdown
    assert "https://other.example/x" not in markdown  # found, never read, never cited


def test_an_uncited_claim_is_unsupported_whatever_it_states() -> None:
    checked = verify(
        "Kelsby kept its bridge. It is widely regarded as a landmark. Paris has 9 bridges.",
        ledger(),
        "What about Kelsby?",
    )
    assert checked.body == ""
    assert [(u.sentence, u.reason) for u in checked.unsupported] == [
        ("Kelsby kept its bridge.", UNCITED),  # its name is in a source: not enough
        ("It is widely regarded as a landmark.", UNCITED),  # no name, no number: still a claim
        ("Paris has 9 bridges.", UNCITED),
    ]


def test_sentences_that_state_nothing_stay_uncited() -> None:
    draft = (
        "## Findings\n\n"
        "Here is what the sources say. This report looks at why Kelsby would keep its bridge.\n\n"
        "**Key points**\n\n"
        "The plan passed with 61 percent of the vote [1]. "
        "The sources do not say who will pay for the repair. Why would a town keep a bridge?\n\n"
        "No source mentions Glasgow."
    )
    checked = verify(draft, ledger(), "Why did Kelsby keep its bridge?")
    assert checked.body == draft.removesuffix("\n\nNo source mentions Glasgow.")
    # Stating nothing is no licence for a name or number of its own.
    (removed,) = checked.unsupported
    assert removed.sentence == "No source mentions Glasgow."
    assert "'Glasgow' is in none" in removed.reason


def test_a_sentence_citing_a_source_about_something_else_is_removed() -> None:
    draft = (
        "Otters thrive in polluted water [1]. "  # no name, no number: the old check passed it
        "Kelsby voted to demolish the harbour [1]. "  # its name is in [1], its claim is not
        "Kelsby voted to repair its bridge, which dates from 1894 [1]. "  # the writer's words
        "Residents voted to repair the bridge, and otters were found at 78 sites [1, 2]."
    )
    checked = verify(draft, ledger(), "")
    assert checked.body == (
        "Kelsby voted to repair its bridge, which dates from 1894 [1]. "
        "Residents voted to repair the bridge, and otters were found at 78 sites [1, 2]."
    )
    reasons = [u.reason for u in checked.unsupported]
    assert reasons == [
        "the cited source [1] does not say this: 'otters', 'thrive', 'polluted', 'water'"
        " not in its passage that matches best",
        "the cited source [1] does not say this: 'demolish' not in its passage that matches best",
    ]


def test_a_paragraphs_next_citation_holds_the_sentences_before_it() -> None:
    paragraph = "Kelsby voted to repair its bridge. The plan passed with {} percent [1]."
    kept = verify(paragraph.format(61), ledger(), "")
    assert kept.body == paragraph.format(61) and kept.unsupported == []
    # Held to [1], the first sentence fails when [1] does not say it...
    wrong = verify("Otters love the harbour. The plan passed with 61 percent [1].", ledger(), "")
    assert wrong.body == "The plan passed with 61 percent [1]."
    assert wrong.unsupported[0].reason == (
        "cites no source, and its paragraph's next citation [1] does not say this: 'otters',"
        " 'love' not in its passage that matches best"
    )
    # ... and when the sentence it leant on goes, it has no citation left.
    gone = verify(paragraph.format(75), ledger(), "")
    assert gone.body == ""
    assert [u.reason for u in gone.unsupported] == [UNCITED, "'75' not in the cited source [1]"]
    # A citation in the next paragraph does not reach back.
    apart = verify(
        "Kelsby voted to repair its bridge.\n\nIt has crossed the harbour since 1894 [1].",
        ledger(),
        "",
    )
    assert [u.reason for u in apart.unsupported] == [UNCITED]


def test_a_sentence_wrapped_across_lines_or_cut_by_an_abbreviation_keeps_its_citation() -> None:
    page = Found(
        url="https://wiki.example/feo",
        title="Giacomo Feo",
        text="Giacomo Feo (c. 1471 – 27 August 1495), was the second husband of Caterina Sforza.",
        kind="page",
        at=1.0,
        step="s2",
    )
    entries, _ = file_sources([], [page], max_sources=4)
    draft = (
        "Giacomo Feo (c. 1471 – 27 August 1495) was the second\n"
        "husband of Caterina Sforza [1].\n- a list item\n  on two lines [1]."
    )
    checked = verify(draft, entries, "")
    assert checked.body.splitlines()[0] == (
        "Giacomo Feo (c. 1471 – 27 August 1495) was the second husband of Caterina Sforza [1]."
    )
    assert [u.sentence for u in checked.unsupported] == ["a list item on two lines [1]."]


def test_the_models_own_reference_list_and_html_are_dropped() -> None:
    draft = (
        "The bridge has crossed the harbour since 1894 [1].\n\n<script>alert(1)</script>\n\n"
        "## References\n1. https://invented.example/a\n"
    )
    checked = verify(draft, ledger(), "")
    assert "invented" not in checked.body and "<script>" not in checked.body
    assert checked.body == "The bridge has crossed the harbour since 1894 [1]."


def test_claims_sentences_and_numbers() -> None:
    numbers, names = claims("In March 2024, Kelsby spent 4,200,000 on the bridge [1].")
    assert numbers == ["2024", "4200000"] and names == ["March", "Kelsby"]
    assert split_sentences("One is here. [1] Two is there [2]. Three.") == [
        "One is here. [1]",
        "Two is there [2].",
        "Three.",
    ]


def test_ledger_numbers_are_stable_and_reading_upgrades_a_result() -> None:
    text = (
        "Today's date: 2026-11-23\n\n[1] Title: Otter count\nSnippet: 78 of 90 sites.\n"
        "URL: https://nature.example/otters\n\n[2] Title: Bridge\nSnippet: s\n"
        "URL: https://news.example/bridge/"
    )
    hits = search_hits(text, "s1")
    assert [h["url"] for h in hits] == [
        "https://nature.example/otters",
        "https://news.example/bridge/",
    ]
    entries, _ = file_sources([], hits, max_sources=12)
    page = page_read(
        "URL: https://news.example/bridge\nExtracted text:\nFull text.",
        "https://news.example/bridge#top",
        "s2",
    )
    assert page is not None
    entries, touched = file_sources(entries, [page], max_sources=12)
    assert touched == [2] and entries[1]["kind"] == "page" and entries[1]["text"] == "Full text."
    found, _ = file_sources(entries, search_hits(text.replace("otters", "owls"), "s3"), 1)
    assert len(found) == 3  # results found are filed: max_sources bounds the pages read
    url = "https://x.example/p"
    other = page_read(f"URL: {url}\nExtracted text:\nMore.", url, "s4")
    assert other is not None
    full, _ = file_sources(found, [other], max_sources=1)
    assert full == found  # one page read already: no room for another


def test_citations_link_to_ledger_urls_only_and_titles_stay_text() -> None:
    sources = [{"n": 1, "url": "https://a.example/x"}, {"n": 2, "url": "javascript:alert(1)"}]
    linked = link_citations("Fact [1]. Other [2]. Both [1, 2].", sources)
    assert "[\\[1\\]](https://a.example/x)" in linked
    assert "javascript" not in linked and "Other [2]." in linked
    refs = references_markdown(
        [
            {
                "n": 1,
                "url": "https://a.example/x",
                "title": "![x](https://t.example/p.png) <b>",
                "text": "",
                "kind": "page",
                "found_at": 0,
                "read_at": 0,
                "step": "s1",
            }
        ]
    )
    assert "\\!\\[x\\]" in refs and "\\<b\\>" in refs
