"""Retrieval is one part: no module outside ``local2.retrieval`` defines a tokeniser, a BM25
or a sentence splitter of its own (docs/architecture.md: ``retrieval/``). What a second copy
looks like:

- a name for one: ``_SENTENCE_END``, ``_STOPWORDS``, a function ``terms``, ``_stem``,
  ``tokenize``, ``bm25_scores``, a class named like ``*BM25*``;
- an import of ``bm25s`` (the BM25 library: only :class:`local2.retrieval.Bm25` wraps it);
- a regular expression that splits at sentence ends (a look-behind on ``.!?``) or scores
  with Okapi's ``k1``/``b`` (names ``_K1``, ``_B``, ``K1``);
- a regular expression that splits text into words, given to ``re.compile``, ``findall``,
  ``finditer`` or ``split``: a run of word characters (``\\w+``, ``[\\w'.-]+``,
  ``[^\\W_]+``, ``[a-z0-9]+``, a letter then ``[\\w']*``), alone or as a branch of an
  alternation. A name finder (a capital first, ``[A-Z][\\w']*``), a run inside a longer
  pattern, or a class of what is not a word (``[\\W_]+``, ``[^a-z0-9]+``) is not one.

A module that needs any of these imports it from ``local2.retrieval`` (``terms`` to match,
``words`` for every word as written), or says at the pattern why its words differ and is
named in ``_TOKENISERS_ALLOWED``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "local2"
PART = PACKAGE / "retrieval"

_NAMES = {"_SENTENCE_END", "_STOPWORDS", "_STOPWORD_TEXT", "_K1", "_B", "K1"}
_FUNCTIONS = {"terms", "_stem", "stem", "tokenize", "tokenise", "bm25_scores", "split_sentences"}
_FUNCTIONS_ALLOWED = {
    # verify's keeps a citation mark after a full stop with its sentence, on top of
    # local2.retrieval.sentences (which does the splitting)
    "local2.research._verify": {"split_sentences"},
}
_SENTENCE_SPLIT = re.compile(r"\(\?<=\[[^\]]*[.!?]")
_CLASS = r"(?:\\w|\[(?:\\.|[^\]\\])*\])"  # \w, or a [...] class
_WORD_RUN = re.compile(rf"(?:\\b)?({_CLASS})(?:{_CLASS})?[+*](?:\\b)?")
_WORD_CALLS = {"compile", "findall", "finditer", "split"}
_TOKENISERS_ALLOWED = {
    # Each says why at the pattern: words that are not terms, on purpose.
    "local2.memory._embedders": {r"\w+"},  # the hashing embedder's recorded vectors
    "local2.memory._facts": {r"[A-Za-z\u00c0-\u024f][\w'\u2019-]*|\d+(?:[.,:/-]\d+)*"},
    "local2.research._planner": {r"[\w'.+-]+"},  # a search engine's words as written
    "local2.research._prompts": {r"[\w'’-]+"},  # the next hop's query words as written
    "local2.files._index": {r"[\w'’.-]+|[(),&]"},  # a file's title as a text writes it
}


def _outside() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PART in path.parents:
            continue
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found.append((name.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))))
    return found


def _branches(pattern: str) -> list[str]:
    """The top-level alternatives of a regular expression (``a|[b|c]|(d|e)``: three)."""
    found, depth, start, i = [], 0, 0, 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3  # a class starting with "]"
                continue
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            found.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*found, pattern[start:]]


def _wordy(first: str) -> bool:
    """Whether a run starting with this class is a word's: ``\\w``, a class with ``\\w``
    or lower-case letters, or one of what is not a non-word (``[^\\W_]``)."""
    if first == r"\w":
        return True
    if first.startswith("[^"):
        return r"\W" in first
    return r"\w" in first or "a-z" in first


def word_splitter(pattern: str) -> bool:
    """Whether ``pattern`` splits text into words (see the module's docstring)."""
    for branch in _branches(pattern):
        run = _WORD_RUN.fullmatch(branch)
        if run is not None and _wordy(run.group(1)):
            return True
    return False


def _word_splitters(name: str, tree: ast.Module) -> list[str]:
    found = []
    allowed = _TOKENISERS_ALLOWED.get(name, set())
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in _WORD_CALLS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            continue
        pattern = node.args[0].value
        if word_splitter(pattern) and pattern not in allowed:
            found.append(f"{name}: a word tokeniser re.{node.func.attr}({pattern!r})")
    return found


def _second_copies(name: str, tree: ast.Module) -> list[str]:
    found = []
    allowed = _FUNCTIONS_ALLOWED.get(name, set())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in _FUNCTIONS - allowed:
            found.append(f"{name}: function {node.name}")
        elif isinstance(node, ast.ClassDef) and "bm25" in node.name.lower():
            found.append(f"{name}: class {node.name}")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if node.id in _NAMES:
                found.append(f"{name}: {node.id}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            modules.append(getattr(node, "module", None) or "")
            if any(m.split(".")[0] == "bm25s" for m in modules):
                found.append(f"{name}: imports bm25s")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _SENTENCE_SPLIT.search(node.value)
        ):
            found.append(f"{name}: a sentence splitter {node.value!r}")
    return found + _word_splitters(name, tree)


def test_no_module_outside_retrieval_defines_a_tokeniser_bm25_or_sentence_splitter() -> None:
    found = [copy for name, tree in _outside() for copy in _second_copies(name, tree)]
    assert found == [], "use local2.retrieval's instead:\n" + "\n".join(found)


def test_the_check_finds_a_second_copy() -> None:
    """The check is not blind: each kind of copy, planted, is found."""
    planted = ast.parse(
        "import re\nimport bm25s\n"
        '_SENTENCE_END = re.compile(r"(?<=[.!?])\\s+")\n'
        "def terms(text): ...\n"
        "class MyBM25: ...\n"
        'SPLIT = re.compile(r"(?<=[.;])\\s")\n'
        'WORDS = re.compile(r"\\w+")\n'
        'found = re.findall(r"[a-z0-9]+", "text")\n'
    )
    found = _second_copies("local2.somewhere", planted)
    assert len(found) == 8, found


def test_what_splits_words_and_what_does_not() -> None:
    """Word tokenisers, however written, are found; names, markup, paths and the classes of
    what is not a word are not (no false alarm)."""
    splitters = [
        r"\w+",
        r"[\w'.+-]+",
        r"[^\W_]+",
        r"[a-z0-9]+",
        r"\b\w+\b",
        r"[A-Za-z\u00c0-\u024f][\w'\u2019-]*|\d+(?:[.,:/-]\d+)*",
        r"[\w'’.-]+|[(),&]",
    ]
    others = [
        r"\b[A-Z][\w'’-]*\w|\b[A-Z]\b",  # names
        r"[A-Z][\w'’.-]*[\w]",
        r"[\W_]+",  # what is not a word
        r"[^a-z0-9]+",
        r"\w",
        r"(\w+): \1\((['\"])(.*)\2\)",
        r"^[a-z0-9][a-z0-9_.@+-]{0,127}$",
        r"[A-Za-z_]\w*(?:\.call)?\s*\(",
        r"```[\w-]*\s*```",
        r"\s*\S+\s*",
        r"[|\w]+\)",
    ]
    assert [p for p in splitters if not word_splitter(p)] == []
    assert [p for p in others if word_splitter(p)] == []
