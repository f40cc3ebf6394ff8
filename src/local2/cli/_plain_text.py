"""Markdown as plain text, for a terminal that does not render it.

A report is Markdown (``--out`` writes it so, the app renders it); printed as it is, a person
reads its escapes and marks (``web\\_search failed \\(``, ``~~...~~``, ``[title](url)``).
Parsed by markdown-it (CommonMark, as the app's renderer reads it) and written back as
text: headings underlined, lists as ``-`` or ``1.``, a link as its text with the URL after
it, escapes and emphasis gone.
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark").enable("strikethrough")
_UNDERLINES = {"h1": "=", "h2": "-"}


def inline_text(children: Sequence[Token]) -> str:
    """An inline run as text: a link's URL after its words, code without its marks."""
    parts: list[str] = []
    links: list[str] = []
    for token in children:
        kind = token.type
        if kind in ("text", "code_inline", "html_inline"):
            parts.append(token.content)
        elif kind in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif kind == "image":
            parts.append(token.content or str(token.attrs.get("alt") or ""))
        elif kind == "link_open":
            links.append(str(token.attrs.get("href") or ""))
            parts.append("\x00")  # where the link's words begin
        elif kind == "link_close":
            href = links.pop() if links else ""
            start = len(parts) - 1 - parts[::-1].index("\x00")
            words = "".join(parts[start + 1 :])
            parts[start:] = [words if not href or href == words else f"{words} ({href})"]
    return "".join(parts)


class _Writer:
    """Blocks written one after another, each list item with its marker and indent."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.lists: list[list[int]] = []  # per open list: [next number] (0: bullets)
        self.marker_due = False  # the next block is an item's first: it takes the marker
        self.list_began = False  # the next block is a list's first: a blank line before it

    def prefix(self) -> tuple[str, str]:
        """The first line's prefix and the following lines' indent of the next block."""
        if not self.lists:
            return "", ""
        indent = "   " * (len(self.lists) - 1)
        if not self.marker_due:
            return indent + "   ", indent + "   "
        self.marker_due = False
        number = self.lists[-1][0]
        if number:
            self.lists[-1][0] += 1
        marker = f"{number}. " if number else "- "
        return indent + marker, indent + " " * len(marker)

    def add(self, text: str, tight: bool = False) -> None:
        """A block; ``tight``: an item's paragraph of a tight list (no blank line before)."""
        close = tight and not self.list_began
        self.list_began = False
        first, rest = self.prefix()
        lines = text.split("\n")
        shaped = "\n".join([first + lines[0], *(rest + line for line in lines[1:])])
        if self.blocks:
            shaped = ("\n" if close else "\n\n") + shaped
        self.blocks.append(shaped)


def markdown_text(markdown: str) -> str:
    """``markdown`` as plain text for a terminal."""
    writer = _Writer()
    heading = ""
    tight = False
    for token in _PARSER.parse(markdown):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = int(token.attrs.get("start") or 1) if kind == "ordered_list_open" else 0
            writer.lists.append([start])
            writer.list_began = len(writer.lists) == 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            writer.lists.pop()
        elif kind == "list_item_open":
            writer.marker_due = True
        elif kind == "heading_open":
            heading = token.tag
        elif kind == "paragraph_open":
            tight = token.hidden  # a tight list's paragraphs are hidden
        elif kind == "inline":
            text = inline_text(token.children or [])
            if heading:
                line = _UNDERLINES.get(heading)
                text = f"{text}\n{line * len(text)}" if line else text
                heading = ""
                tight = False
            writer.add(text, tight=tight and bool(writer.lists))
        elif kind in ("fence", "code_block"):
            writer.add("\n".join("    " + line for line in token.content.rstrip("\n").split("\n")))
        elif kind == "hr":
            writer.add("-" * 20)
    return "".join(writer.blocks).strip("\n") + "\n"
