"""Grounding checks that need no model: what the answer cites must have been seen this turn.

A small model's favourite hallucination is a plausible URL, memory or file it never read,
or a figure (a price, a version) a search that failed would have given.
These checks compare the answer's citations with the turn's tool results (and the
arguments of tool calls that succeeded, so a page fetched or a file read counts even when
its result does not echo its address) and flag what was never seen.

Cited pages: an answer that cites a document's page must cite one whose text it was given.

web_fetch, read_file and the turn's document hits render a document's text under page
markers (``[Page 12]``, ``[Page 12 of 40]``: :func:`local2.documents.page_sections`), after a
first line naming the document (``URL: <url>`` or ``File: <path>``). A citation of
``<url>#page=N``, or of ``report.pdf, page N`` (also ``p. N``, ``(page N)``, slides and
chapters), is flagged when that document's text was read this turn but page N was not among
its pages: the model read pages 3 and 4 and cites page 12.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from local2.contracts import ToolCallRecord
from local2.documents import page_sections
from local2.retrieval import unstated_numbers

_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_URL_TRAILING = ".,;:!?*_"
_CLOSERS = {")": "(", "]": "[", "}": "{"}

# Engram ids: "m" + 12 hex chars (memory.store.engram_id), also "m-123" and UUIDs.
# Possessive quantifiers keep a long run of hex digits from backtracking quadratically.
_ID = r"m-?(?=[0-9a-f]*\d)[0-9a-f]++|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_BRACKETED_ID = re.compile(rf"\[\s*({_ID})\s*\]")
_MEMORY_ID = re.compile(rf"\bmemor(?:y|ies)\s*(?:id\s*)?[:#]?\s*\[?({_ID})\b", re.IGNORECASE)

_PATH = re.compile(r"(?<![\w./~-])[\w./~-]*\w\.([A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
# Bare names ("notes.md") only count as files with these extensions, so "Node.js" or
# "e.g." are not taken for files; anything with a "/" and an extension is.
_FILE_EXTENSIONS = frozenset(
    [
        "md",
        "markdown",
        "txt",
        "json",
        "jsonl",
        "csv",
        "tsv",
        "yaml",
        "yml",
        "toml",
        "py",
        "ipynb",
        "rst",
        "pdf",
        "log",
        "ini",
        "cfg",
        "xml",
        "docx",
        "xlsx",
        "sh",
    ]
)


def _trim_url(url: str) -> str:
    """Drop closing punctuation, and closing brackets that have no opening one in the URL."""
    unmatched = {c: url.count(c) - url.count(o) for c, o in _CLOSERS.items()}
    end = len(url)
    while end:
        last = url[end - 1]
        if last in _CLOSERS and unmatched[last] > 0:
            unmatched[last] -= 1
        elif last not in _URL_TRAILING:
            break
        end -= 1
    return url[:end]


def find_urls(text: str) -> list[str]:
    """URLs in ``text``, without the punctuation or brackets that close a sentence or link."""
    return [u for u in (_trim_url(m.group(0)) for m in _URL.finditer(text)) if "://" in u]


def _url_key(url: str) -> str:
    """Compare URLs loosely: scheme, case of the host, fragment and a final slash ignored."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{port}{parts.path.rstrip('/')}{query}"


def find_memory_ids(text: str) -> list[str]:
    """Engram ids cited as ``[m3fa9...]`` (as the recall tool prints them) or ``memory m-1``."""
    found = [m.group(1) for m in _BRACKETED_ID.finditer(text)]
    found += [m.group(1) for m in _MEMORY_ID.finditer(text)]
    return _unique(found)


def find_paths(text: str) -> list[str]:
    """File paths cited in ``text`` (URLs removed first): ``docs/a.md``, ``notes.txt``."""
    text = _URL.sub(" ", text)
    paths = []
    for m in _PATH.finditer(text):
        path = m.group(0)
        if "/" in path or m.group(1).lower() in _FILE_EXTENSIONS:
            paths.append(path)
    return _unique(paths)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def evidence_text(evidence: list[ToolCallRecord]) -> str:
    """Everything seen this turn: every result, and the arguments of calls that succeeded."""
    chunks = []
    for call in evidence:
        chunks.append(str(call.get("result") or ""))
        if not call.get("error"):
            chunks += [str(v) for v in (call.get("args") or {}).values()]
    return "\n".join(chunks)


def _mentions(text: str, needle: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(needle)}(?![\w-])", text) is not None


def _safe_known(known: Callable[[str], bool], memory_id: str) -> bool:
    try:
        return bool(known(memory_id))
    except Exception:  # the store is down: cannot tell, so do not accuse the answer
        return True


FIGURE_DIGITS = 2  # a lone digit ("3 ways", "1.") is not taken for a figure in an answer


def unsupported_numbers(answer: str, seen: str) -> list[str]:
    """Figures in ``answer`` that ``seen`` (what the turn's tools returned and what the model
    was told) does not contain: a small model's invented price or version. The same check
    as a report sentence's numbers against its source (``local2.retrieval._relevance``)."""
    return unstated_numbers(_URL.sub(" ", answer), seen, shortest=FIGURE_DIGITS)


def grounding_flags(
    answer: str,
    evidence: list[ToolCallRecord],
    known_memory_ids: Callable[[str], bool] | None = None,
    listing_tools: Collection[str] = (),
    context: str = "",
) -> list[str]:
    """Citations and figures in ``answer`` that nothing this turn supports, one message each.
    ``listing_tools`` name files without reading them (``Tool.evidence == "listing"``);
    ``context`` is what else the model was told (the question, memories)."""
    seen = evidence_text(evidence)
    seen_urls = {_url_key(u) for u in find_urls(seen)}
    flags = []
    for url in _unique(find_urls(answer)):
        if _url_key(url) not in seen_urls and url.rstrip("/") not in seen:
            flags.append(f"uncited URL: {url} (not in any tool result)")
    for memory_id in find_memory_ids(answer):
        if memory_id in seen:
            continue
        if known_memory_ids is None or not _safe_known(known_memory_ids, memory_id):
            flags.append(f"unknown memory id: {memory_id}")
    # A file counts as read like a page counts as fetched: only a tool that returned its
    # content vouches for it; listing and search tools merely name files.
    read = evidence_text([c for c in evidence if c.get("tool") not in listing_tools])
    for path in find_paths(answer):
        bare = path.removeprefix("~/").removeprefix("./")
        if not _mentions(read, bare):
            flags.append(f"unread file: {path} (never read this turn)")
    # A document's page cited must be one whose text was read (pages.py).
    flags += unread_pages(answer, evidence, _unique(find_urls(answer)), _url_key)
    if evidence:  # figures are held to the tools on a turn that used some: it rests on them
        flags += [
            f"unsupported figure: {number} (in no tool result or message)"
            for number in unsupported_numbers(answer, f"{seen}\n{context}")
        ]
    return flags


_SOURCE = re.compile(r"\A(?:URL|File): (?P<source>\S+)")
_FRAGMENT_PAGE = re.compile(r"(?:^|&)page=(\d+)\b")
_FILE_PAGE = re.compile(
    r"(?P<path>[\w./~-]*\w\.(?:pdf|docx|pptx|odt|epub|html?|md|txt))[`*_\"')\]]*"
    r"\s*(?:,|:|\(|–|—|-)?\s*(?:page|p\.|slide|chapter)\s*(?P<page>\d+)",
    re.IGNORECASE,
)


def pages_read(evidence: Iterable[ToolCallRecord]) -> dict[str, set[int]]:
    """For each document whose text a tool returned this turn (its URL or file path as the
    result's first line names it), the numbers of the pages that text held."""
    found: dict[str, set[int]] = {}
    for call in evidence:
        result = str(call.get("result") or "")
        source = _SOURCE.match(result)
        sections = page_sections(result) if source and not call.get("error") else []
        if source and sections:
            found.setdefault(source["source"], set()).update(n for n, _ in sections)
    return found


def unread_pages(
    answer: str,
    evidence: list[ToolCallRecord],
    urls: Iterable[str],
    url_key: Callable[[str], str],
) -> list[str]:
    """Flags for the pages ``answer`` cites of documents read this turn but not those pages
    (``urls`` are the answer's URLs, ``url_key`` how two spellings of one are compared)."""
    read = pages_read(evidence)
    if not read:
        return []
    by_url = {url_key(source): pages for source, pages in read.items() if "://" in source}
    flags = []
    for url in urls:
        page = _FRAGMENT_PAGE.search(urlsplit(url).fragment)
        pages = by_url.get(url_key(url))
        if page and pages is not None and int(page.group(1)) not in pages:
            flags.append(_flag(url, int(page.group(1)), pages))
    files = {source: pages for source, pages in read.items() if "://" not in source}
    for match in _FILE_PAGE.finditer(answer):
        pages = _file_pages(match["path"], files)
        number = int(match["page"])
        if pages is not None and number not in pages:
            flags.append(_flag(f"{match['path']}, page {number}", number, pages))
    return list(dict.fromkeys(flags))


def _file_pages(cited: str, files: dict[str, set[int]]) -> set[int] | None:
    """The pages read of the file ``cited`` names (its path, or its name alone)."""
    cited = cited.removeprefix("./")
    for path, pages in files.items():
        if path == cited or path.endswith(f"/{cited}") or PurePosixPath(path).name == cited:
            return pages
    return None


def _flag(cited: str, page: int, pages: set[int]) -> str:
    read = ", ".join(str(n) for n in sorted(pages)[:12])
    return f"unread page: {cited} (page {page} was not among the pages read: {read})"
