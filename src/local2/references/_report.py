"""The report itself as it leaves the app beside its Markdown: HTML here, PDF and DOCX in
:mod:`._report_pdf` and :mod:`._report_docx`, all three from one reading of the Markdown.

The report is read by markdown-it (CommonMark with strikethrough, raw HTML off: the app's
reading), and its tokens are changed once for every format (:func:`report_tokens`):

- each citation mark ``[n]`` in the text (not in a link or code) becomes a link to its
  reference, ``#ref-n``, and says the page where the source is a document's page
  (``[3, p. 12]``); a mark naming no reference stays as written;
- each entry under "References" (``[n] [title](url) — ...``) is the target ``ref-n``, its
  page said after the mark (unless its title says it: ``report.pdf, page 12``).

A link out is kept only where it is http(s) (markdown-it drops ``javascript:`` and its kind
already); everything else is text, escaped by the renderer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from markdown_it import MarkdownIt
from markdown_it.token import Token

from local2.contracts import CitedSource

_PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough")
MARK = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")  # research's CITATION
_ENTRY = re.compile(r"^\[(\d{1,4})\]\s")  # a References entry's own number
_REFERENCES = re.compile(r"^references$", re.I)
_OUT = re.compile(r"^(?:https?://|mailto:)", re.I)

CSS = """
body { font-family: "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; line-height: 1.5;
  max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
a { color: #0645ad; } a.citation { text-decoration: none; white-space: nowrap; }
p.reference { padding-left: 2.2em; text-indent: -2.2em; }
p.reference:target { background: #fff5c2; }
blockquote { border-left: 4px solid #c9a227; margin-left: 0; padding-left: 1em; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; }
"""


def anchor(n: int) -> str:
    """The name a reference's entry goes by: ``ref-3``."""
    return f"ref-{n}"


def pages_of(sources: Sequence[CitedSource]) -> dict[int, int | None]:
    """Each reference's number and the page it is (None where it is not a document's page)."""
    return {s["n"]: s.get("page") for s in sources}


def citation_label(n: int, page: int | None) -> str:
    """A citation as a reader sees it: ``[3]``, or ``[3, p. 12]`` for a document's page."""
    return f"[{n}, p. {page}]" if page else f"[{n}]"


@dataclass
class Report:
    """The report read for export: its tokens (citations linked, entries named), title and
    the references it lists."""

    tokens: list[Token]
    title: str
    pages: dict[int, int | None] = field(default_factory=dict)


@dataclass
class Nesting:
    """Where an export is among the report's lists and quotes, as the DOCX and PDF writers
    follow them: per open list its next number (0: a bullet list), and how deep in quotes."""

    lists: list[list[int]] = field(default_factory=list)
    quotes: int = 0
    item: int = 0  # the number of the item opened last (0: a bullet)

    def follow(self, token: Token) -> bool:
        """Keep up with ``token`` if it opens or closes a list, an item or a quote (True);
        an item that opens takes its list's next number (:attr:`item`)."""
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = int(token.attrs.get("start") or 1)
            self.lists.append([start if kind == "ordered_list_open" else 0])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
        elif kind == "list_item_open":
            if self.lists:
                number = self.item = self.lists[-1][0]
                self.lists[-1][0] = number + 1 if number else 0
        elif kind in ("blockquote_open", "blockquote_close"):
            self.quotes += 1 if kind == "blockquote_open" else -1
        else:
            return False
        return True


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _linked(label: str, n: int) -> list[Token]:
    opened = Token("link_open", "a", 1)
    opened.attrs = {"href": f"#{anchor(n)}", "class": "citation"}
    return [opened, _text(label), Token("link_close", "a", -1)]


def _cite(text: str, pages: dict[int, int | None]) -> list[Token]:
    """A text token's content with each mark naming known references made links."""
    out: list[Token] = []
    at = 0
    for found in MARK.finditer(text):
        numbers = [int(p) for p in re.split(r"[,;]", found.group(1))]
        if not all(n in pages for n in numbers):
            continue
        if found.start() > at:
            out.append(_text(text[at : found.start()]))
        for n in numbers:
            out += _linked(citation_label(n, pages[n]), n)
        at = found.end()
    if at < len(text):
        out.append(_text(text[at:]))
    return out


def _inline(children: list[Token], pages: dict[int, int | None], entry: int | None) -> list[Token]:
    """An inline run with its citation marks linked, outside links; an entry's own mark left
    as its number, with its page."""
    out: list[Token] = []
    in_link = 0
    words = " ".join(c.content for c in children if c.type == "text")
    page = pages.get(entry) if entry is not None else None
    if page and re.search(rf"\bpage {page}\b", words, re.I):
        page = None  # its title says the page already ("report.pdf, page 12")
    for i, token in enumerate(children):
        if token.type == "link_open":
            href = str(token.attrs.get("href") or "")
            if not _OUT.match(href):  # only http(s) and mailto leave the report
                token.attrs.pop("href", None)
            in_link += 1
        elif token.type == "link_close":
            in_link = max(0, in_link - 1)
        if token.type == "text" and not in_link:
            text = token.content
            if entry is not None and i == 0:
                own = _ENTRY.match(text)
                if own:
                    head = f"[{entry}]" + (f" p. {page}," if page else "")
                    out.append(_text(head + " "))
                    text = text[own.end() :]
            out += _cite(text, pages)
            continue
        out.append(token)
    return out


def _entries(tokens: list[Token]) -> dict[int, int]:
    """The References' entries: each one's number and the index of its paragraph's text."""
    found: dict[int, int] = {}
    section = ""
    for i, token in enumerate(tokens):
        if token.type != "inline" or i == 0:
            continue
        if tokens[i - 1].type == "heading_open":
            section = token.content.strip()
        elif tokens[i - 1].type == "paragraph_open" and _REFERENCES.match(section):
            own = _ENTRY.match(token.content)
            if own:
                found.setdefault(int(own.group(1)), i)
    return found


def report_tokens(report: str, sources: Sequence[CitedSource]) -> Report:
    """``report`` (the run's Markdown) read once for every export format: a citation links
    only to an entry the References list (with the page its source is)."""
    tokens = _PARSER.parse(report)
    entries = _entries(tokens)
    pages = {n: page for n, page in pages_of(sources).items() if n in entries}
    pages.update({n: None for n in entries if n not in pages})
    by_index = {i: n for n, i in entries.items()}
    title = ""
    for i, token in enumerate(tokens):
        if token.type != "inline":
            continue
        if not title and i > 0 and tokens[i - 1].type == "heading_open":
            title = "".join(c.content for c in token.children or [] if c.type == "text").strip()
        entry = by_index.get(i)
        if entry is not None:
            tokens[i - 1].attrs = {"id": anchor(entry), "class": "reference"}
        token.children = _inline(list(token.children or []), pages, entry)
    return Report(tokens, title or "Research report", pages)


def to_html(report: str, sources: Sequence[CitedSource]) -> str:
    """The report as one HTML file: its citations linked to the References, pages kept,
    styled in the file itself (nothing fetched when it is opened)."""
    read = report_tokens(report, sources)
    body = _PARSER.renderer.render(read.tokens, _PARSER.options, {})
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="LoCAL2">\n'
        f"<title>{escape(read.title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )
