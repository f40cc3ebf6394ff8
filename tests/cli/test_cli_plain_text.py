"""A report printed at a terminal is plain text: ``local2.cli._plain_text`` turns the Markdown
LoCAL2 writes (escaped titles and errors, emphasis, links, lists, struck sentences) into what
a person reads, with nothing lost."""

from __future__ import annotations

from local2.cli._plain_text import markdown_text
from local2.research._verify import plain

REPORT = f"""# What are the health benefits of green tea?

_{plain("web_search failed (search error: ddgs > refused)")}_

Green tea holds *catechins* and **caffeine** [1].

1. first
2. second

- a `code` mark
- [Kelsby \\(harbour\\)](https://kelsby.example/a) — read 2024-01-01

## Removed as unsupported

- ~~Green tea cures everything.~~ (cites no source)
"""


def test_markdown_becomes_the_text_a_person_reads() -> None:
    text = markdown_text(REPORT)
    assert text.splitlines()[:2] == [
        "What are the health benefits of green tea?",
        "=" * len("What are the health benefits of green tea?"),
    ]
    assert "web_search failed (search error: ddgs > refused)" in text  # escapes undone
    assert "Green tea holds catechins and caffeine [1]." in text  # marks gone, citation kept
    assert "1. first\n2. second" in text
    assert "- a code mark\n- Kelsby (harbour) (https://kelsby.example/a) — read" in text
    assert "Removed as unsupported\n----------------------" in text
    assert "- Green tea cures everything. (cites no source)" in text
    for mark in ("\\", "**", "~~", "`", "](", "# "):
        assert mark not in text, mark
