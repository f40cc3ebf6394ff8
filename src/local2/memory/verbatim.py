"""Keep tool output out of memory: cut what an answer copied word for word from a tool.

An answer that quotes a page would otherwise carry the page into the episodic record, and
from there into every later prompt that recalls it (the issue that began this: "Q: ... A:
<raw tool output>"). Runs of ``min_words`` or more words that also occur in one of the
turn's tool results are replaced by a short marker naming the tool; what the model wrote in
its own words stays, and so do URLs it cites (shorter than a run of words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MIN_WORDS = 5  # a copied headline ("Chip makers report record quarterly revenue") is cut too
_TOKEN = re.compile(r"\S+")


def _norm(word: str) -> str:
    return re.sub(r"[^\w]", "", word.lower())


def _shingles(text: str, n: int) -> set[tuple[str, ...]]:
    words = [w for w in (_norm(t) for t in _TOKEN.findall(text)) if w]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def without_tool_text(
    text: str, tool_results: Iterable[tuple[str, str]], min_words: int = MIN_WORDS
) -> tuple[str, int]:
    """``text`` with every run of ``min_words``+ words copied from a tool result cut out.

    ``tool_results`` are ``(tool name, result text)``. Returns the new text and how many
    words were cut.
    """
    sources = [(name, _shingles(result, min_words)) for name, result in tool_results if result]
    if not sources or not text:
        return text, 0
    tokens = list(_TOKEN.finditer(text))
    norms = [_norm(t.group()) for t in tokens]
    keep = [i for i, w in enumerate(norms) if w]  # positions of real words
    owner: dict[int, str] = {}
    for j in range(len(keep) - min_words + 1):
        window = tuple(norms[keep[k]] for k in range(j, j + min_words))
        for name, shingles in sources:
            if window in shingles:
                for k in range(j, j + min_words):
                    owner.setdefault(keep[k], name)
                break
    if not owner:
        return text, 0
    out: list[str] = []
    last_end = 0
    i = 0
    while i < len(tokens):
        if i not in owner:
            i += 1
            continue
        start = i
        while i < len(tokens) and (i in owner or not norms[i]):
            i += 1
        end = i
        while end > start and end - 1 not in owner:  # do not swallow trailing punctuation
            end -= 1
        out.append(text[last_end : tokens[start].start()])
        out.append(f"[… text from {owner[start]} not kept in memory]")
        last_end = tokens[end - 1].end()
        i = end
    out.append(text[last_end:])
    return "".join(out), len(owner)
