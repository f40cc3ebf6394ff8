"""Passages of a document picked for a question across its pages, each with its page; a page
range as text with page markers; a page as a ``#page=N`` link. Documents of known text:
built page by page, and a PDF of 40 pages read by the PDF reader."""

from __future__ import annotations

import random

import pytest

from local2.documents._extract import (
    GAP,
    Passage,
    page_link,
    pages_text,
    render_passages,
)
from local2.documents._model import Document, Limits, Page
from local2.documents._pdf import read_pdf
from local2.retrieval._relevance import pick_passages
from local2_testkit.documents import long_pdf, paragraphs

FACT = "The pivot bearing of the Kelsby swing bridge was cast in Sheffield in 1893."


def book(pages: int = 12, fact_on: int = 9, seed: int = 1) -> Document:
    """Pages of harbour prose (a heading and four paragraphs each), one planted fact."""
    out = []
    for n in range(1, pages + 1):
        body = paragraphs(seed * 100 + n, 4)
        if n == fact_on:
            body.insert(2, FACT)
        out.append(Page(n, f"Chapter {n}\n" + "\n".join(body)))
    return Document("pdf", "Harbour book", tuple(out))


def test_the_answer_on_a_far_page_is_picked_with_its_page() -> None:
    document = book()
    picked = pick_passages(document, "where was the pivot bearing cast?", 1200)
    fact = [p for p in picked if "Sheffield" in p.text]
    assert [p.page for p in fact] == [9]
    assert fact[0].score == max(p.score for p in picked)
    assert all(p.text in document.pages[p.page - 1].text for p in picked)  # never straddling
    assert [p.index for p in picked] == sorted(p.index for p in picked)  # reading order


def test_rendered_passages_fit_the_budget_and_name_their_pages() -> None:
    document = book(pages=30, fact_on=17)
    rng = random.Random(7)
    for budget in [60, 200, 500, 1000, 3000, 8000, *(rng.randint(50, 20000) for _ in range(20))]:
        picked = pick_passages(document, "Sheffield pivot bearing", budget)
        text = render_passages(picked, document.unit)
        assert len(text) <= budget, budget
        assert text.startswith(f"[Page {picked[0].page}]")
    shown = render_passages(pick_passages(document, "Sheffield pivot bearing", 3000))
    assert "[Page 17]" in shown and FACT in shown


def test_gaps_inside_a_page_are_marked_and_pages_are_headed() -> None:
    passages = [
        Passage(2, 4, "one", 1.0),
        Passage(2, 5, "two", 1.0),
        Passage(2, 8, "three", 1.0),
        Passage(5, 20, "four", 1.0),
    ]
    assert render_passages(passages, "slide") == (
        f"[Slide 2]\none\ntwo\n{GAP}\nthree\n[Slide 5]\nfour"
    )


def test_a_word_rare_in_the_document_outweighs_one_on_every_page() -> None:
    document = book(pages=10, fact_on=4)
    picked = pick_passages(document, "harbour bridge Sheffield", 400)
    assert [p.page for p in picked] == [4]


def test_with_no_word_of_the_question_the_first_passages_are_shown() -> None:
    document = book(pages=5)
    picked = pick_passages(document, "zeppelin quantum", 900)
    assert picked[0].page == 1 and picked[0].index == 0
    assert all(p.score == 0 for p in picked) and len(picked) > 1
    assert [p.index for p in picked] == sorted(p.index for p in picked)


def test_one_passage_larger_than_the_budget_is_cut_to_fit() -> None:
    long_line = " ".join(["The Sheffield foundry cast the pivot."] * 18)  # one 700-char passage
    document = Document("pdf", "", (Page(1, "short"), Page(2, long_line)))
    [passage] = pick_passages(document, "Sheffield foundry", 120)
    assert passage.page == 2 and "Sheffield" in passage.text
    assert len(render_passages([passage])) <= 120


def test_nothing_to_pick_from() -> None:
    assert pick_passages(Document("pdf", "", (Page(1, ""),)), "bridge", 500) == []
    assert pick_passages(book(), "bridge", 0) == []


def test_passages_of_a_pdf_read_by_the_reader() -> None:
    document = read_pdf(long_pdf(40).data, Limits())
    picked = pick_passages(document, "page 27", 600)
    assert document.page_count == 40
    assert any(p.page == 27 and p.text.startswith("Page 27.") for p in picked)


def test_a_page_range_with_page_markers() -> None:
    document = book(pages=6)
    text = pages_text(document, 2, 3)
    assert text.startswith("[Page 2 of 6]\nChapter 2\n")
    assert "\n\n[Page 3 of 6]\nChapter 3\n" in text
    assert "Chapter 1" not in text and "Chapter 4" not in text
    assert pages_text(document, 5).count("[Page ") == 2  # to the end
    assert pages_text(document, 6, 99).startswith("[Page 6 of 6]")  # clamped


def test_a_page_range_over_its_characters_says_where_to_go_on() -> None:
    document = book(pages=8)
    text = pages_text(document, 1, 8, max_chars=len(pages_text(document, 1, 2)) + 10)
    assert "[Page 2 of 8]" in text and "[Page 3 of 8]" not in text
    assert text.endswith("[Pages 3-8 left out: over" + text.rsplit("over", 1)[1])
    assert "ask for them from page 3" in text
    one = pages_text(document, 1, 1, max_chars=100)
    assert len(one) <= 100 and one.startswith("[Page 1 of 8]")


def test_a_page_range_outside_the_document_is_refused_plainly() -> None:
    document = book(pages=3)
    with pytest.raises(ValueError, match="has 3 pages"):
        pages_text(document, 4, 5)
    with pytest.raises(ValueError, match="numbered from 1"):
        pages_text(document, 0, 2)
    with pytest.raises(ValueError, match="numbered from 1"):
        pages_text(document, 3, 2)


def test_pages_without_text_say_so() -> None:
    document = Document("pdf", "", (Page(1, "text"), Page(2, "")), no_text_pages=(2,))
    assert "no text layer on this page" in pages_text(document, 2, 2)
    slides = Document("pptx", "", (Page(1, "Title"), Page(2, "")))
    assert (
        pages_text(slides, 1, 2)
        == "[Slide 1 of 2]\nTitle\n\n[Slide 2 of 2]\n(no text on this page)"
    )


def test_page_links() -> None:
    assert page_link("https://example.org/a.pdf", 12) == "https://example.org/a.pdf#page=12"
    assert page_link("https://example.org/a.pdf#page=3", 7) == "https://example.org/a.pdf#page=7"
    assert page_link("https://example.org/a.pdf#x", None) == "https://example.org/a.pdf#x"
    assert page_link("/home/ann/papers/b.pdf", 2) == "/home/ann/papers/b.pdf#page=2"
