"""Retrieval is one part: no module outside ``local2.retrieval`` defines a tokeniser, a BM25
or a sentence splitter of its own (docs/architecture.md: ``retrieval/``). What a second copy
looks like:

- a name for one: ``_SENTENCE_END``, ``_STOPWORDS``, a function ``terms``, ``_stem``,
  ``tokenize``, ``bm25_scores``, a class named like ``*BM25*``;
- an import of ``bm25s`` (the BM25 library: only :class:`local2.retrieval.Bm25` wraps it);
- a regular expression that splits at sentence ends (a look-behind on ``.!?``) or scores
  with Okapi's ``k1``/``b`` (names ``_K1``, ``_B``, ``K1``).

A module that needs any of these imports it from ``local2.retrieval``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "local2"
PART = PACKAGE / "retrieval"

_NAMES = {"_SENTENCE_END", "_STOPWORDS", "_STOPWORD_TEXT", "_K1", "_B", "K1"}
_FUNCTIONS = {"terms", "_stem", "stem", "tokenize", "tokenise", "bm25_scores", "split_sentences"}
_FUNCTIONS_ALLOWED = {
    # verify's keeps a citation mark after a full stop with its sentence, on top of
    # local2.retrieval.sentences (which does the splitting)
    "local2.research.verify": {"split_sentences"},
}
_SENTENCE_SPLIT = re.compile(r"\(\?<=\[[^\]]*[.!?]")


def _outside() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PART in path.parents:
            continue
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found.append((name.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))))
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
    return found


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
    )
    found = _second_copies("local2.somewhere", planted)
    assert len(found) == 6, found
