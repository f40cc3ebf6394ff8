"""Evidence recall: which gold sentences reached the model (whole, or cut at a boundary),
through the real result texts of web_search and web_fetch, and what that says about a wrong
answer."""

from __future__ import annotations

import datetime as dt

from local2.evals import Reached, diagnose, evidence_recall, reached_from_turn
from local2.tools._passages import focus
from local2.tools._search import SearchHit, format_hits

GOLD = "The Saltmere Tidal Mill was built in 1781 to a design by the engineer Tamsin Greve."
OTHER = "Tamsin Greve was born in Harrowby, the daughter of a millwright."


def recall(gold: list[str], *texts: str) -> dict:
    return dict(evidence_recall(gold, [Reached(f"tool:t{i}", t) for i, t in enumerate(texts)]))


def test_whole_sentences_match_across_case_punctuation_and_line_breaks() -> None:
    page = (
        "Intro.\nTHE SALTMERE  tidal-mill was built\n"
        "in 1781 — to a design by the engineer Tamsin Greve!"
    )
    report = recall([GOLD], "unrelated text", page)
    assert report["found"] == 1 and report["recall"] == 1.0
    [item] = report["items"]
    assert (item["how"], item["source"]) == ("whole", "tool:t1")


def test_a_paraphrase_or_another_fact_does_not_count() -> None:
    report = recall(
        [GOLD, OTHER],
        "Greve designed the tidal mill at Saltmere, which was finished in 1781.",
        "Tamsin Greve was born in Harrowby.",  # the start only, and not at a cut
    )
    assert report["found"] == 0 and report["recall"] == 0.0
    assert [i["reached"] for i in report["items"]] == [False, False]


def snippet_of(prefix: str) -> str:
    """The real web_search result text for one hit whose snippet is ``prefix`` + GOLD."""
    filler = "Saltmere is a harbour town on the Vell Coast with a long history of milling. " * 7
    hit = SearchHit("Saltmere Tidal Mill", "corpus://demo/docs/mill", prefix + filler + GOLD)
    return format_hits([hit], dt.date(2026, 11, 27))


def test_a_sentence_cut_at_the_end_of_a_search_snippet_counts_as_cut() -> None:
    """web_search cuts snippets near 600 characters and marks the cut with " …"."""
    eleven = snippet_of("xxxx ")  # keeps "The Saltmere ... 1781 to a design": 11 of 16 words
    assert "1781 to a design …\nURL:" in eleven
    [item] = recall([GOLD], eleven)["items"]
    assert (item["reached"], item["how"]) == (True, "cut")
    three = snippet_of("x" * 39 + " ")  # keeps "The Saltmere Tidal": 3 of 16 words
    assert "milling. The Saltmere Tidal …\nURL:" in three
    assert recall([GOLD], three)["found"] == 0


def test_cut_pieces_count_only_when_long_enough_and_at_a_cut() -> None:
    half = "The Saltmere Tidal Mill was built in 1781 to a"  # 10 of 16 words
    assert recall([GOLD], f"Header […]\n{half} …")["items"][0]["how"] == "cut"
    tail = "design by the engineer Tamsin Greve. The wheel is large."  # the last 6, at a start
    assert recall([GOLD], f"… {tail}")["items"][0]["how"] is None  # 6 < half of 16
    long_tail = "built in 1781 to a design by the engineer Tamsin Greve."  # the last 11
    assert recall([GOLD], f"[…] {long_tail}")["items"][0]["how"] == "cut"
    # The same ten words in the middle of a text (no cut after them) are not the sentence.
    assert recall([GOLD], f"{half} wooden shed near the quay.")["items"][0]["reached"] is False
    assert recall(["Tiny gold."], "Tiny …")["found"] == 0  # under four words: whole only
    assert recall([GOLD], half)["items"][0]["how"] == "cut"  # the text ends mid-sentence
    assert recall([GOLD], f"{half}.")["items"][0]["reached"] is False  # it ends a sentence


def test_a_page_shown_in_passages_with_gaps_keeps_whole_sentences() -> None:
    """web_fetch shows long pages as chosen passages with […] between them."""
    filler = "\n".join(f"Paragraph {i} is about harbour walls and nets." for i in range(80))
    page = f"{filler}\n{GOLD}\n{filler}"
    shown = focus(page, "When was the Saltmere Tidal Mill built?", 2000)
    assert "[…]" in shown.text and GOLD in shown.text
    assert recall([GOLD], shown.text)["items"][0]["how"] == "whole"


def test_recall_is_per_gold_item_and_names_the_first_source() -> None:
    report = recall([GOLD, OTHER, "Nothing else."], OTHER, f"x {GOLD} y", GOLD)
    assert (report["found"], report["total"]) == (2, 3)
    assert report["recall"] == 2 / 3
    assert [i["source"] for i in report["items"]] == ["tool:t1", "tool:t0", None]
    assert recall([], "x")["recall"] == 0.0


def test_a_wrong_answer_is_never_found_partly_found_or_found_misread() -> None:
    two = recall([GOLD, OTHER], GOLD)
    assert diagnose("incorrect", two) == "partly_found"  # type: ignore[arg-type]
    assert diagnose("not_attempted", recall([GOLD], "x")) == "never_found"  # type: ignore[arg-type]
    assert diagnose("incorrect", recall([GOLD], GOLD)) == "found_misread"  # type: ignore[arg-type]
    assert diagnose("correct", recall([GOLD], "x")) is None  # type: ignore[arg-type]
    assert diagnose(None, recall([GOLD], "x")) is None  # type: ignore[arg-type]
    assert diagnose("incorrect", None) is None


def test_what_a_turn_gave_the_model() -> None:
    calls = [
        {"tool": "web_search", "args": {}, "result": "hits", "error": None},
        {"tool": "web_fetch", "args": {}, "result": "", "error": "fetch failed: 404"},
        {"tool": "web_fetch", "args": {}, "result": "page", "error": None},
    ]
    hits = [{"id": "m1", "content": "a memory"}]
    assert reached_from_turn(calls, hits, ["a document passage"]) == [
        Reached("tool:web_search", "hits"),
        Reached("tool:web_fetch", "page"),
        Reached("memory", "a memory"),
        Reached("document", "a document passage"),
    ]
