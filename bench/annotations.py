"""How much of the package is typed ``Any``, at any commit: ``dict[str, Any]``, ``-> Any``
and the other ``Any`` (issue 43).

Read from the code's tokens (``tokenize``), so an ``Any`` in a docstring or a comment is not
counted, and an ``Any`` in an import is not a use. ``dict[str, Any]`` counts the ones
written so (``dict[str, Any] | None`` too); "bare" is every other ``Any`` (``Mapping[str,
Any]``, ``list[Any]``, ``value: Any``, ``cast(Any, ...)``). The product (``src/local2``) and
the test kit (``testkit/src``), each commit read with ``git show``, no checkout needed:

    .venv/bin/python bench/annotations.py 6b6230c HEAD
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from dataclasses import dataclass

ROOTS = ("src/local2", "testkit/src")
UNTYPED_DICT = ["dict", "[", "str", ",", "Any", "]"]


@dataclass
class Counts:
    untyped_dicts: int = 0  # dict[str, Any]
    any_returns: int = 0  # -> Any
    bare: int = 0  # every other Any
    commented: int = 0  # dict[str, Any] with a comment on its line or a comment line above

    def add(self, other: Counts) -> None:
        self.untyped_dicts += other.untyped_dicts
        self.any_returns += other.any_returns
        self.bare += other.bare
        self.commented += other.commented


def count(source: str) -> Counts:
    """The three figures for one module's text."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines()
    comments = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    imports = {
        line
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    code = [t for t in tokens if t.type in (tokenize.NAME, tokenize.OP)]
    counts = Counts()
    for i, token in enumerate(code):
        if token.string != "Any" or token.type != tokenize.NAME or token.start[0] in imports:
            continue
        if [t.string for t in code[i - 4 : i + 2]] == UNTYPED_DICT:
            counts.untyped_dicts += 1
            line = token.start[0]
            above = lines[line - 2].lstrip() if line > 1 else ""
            counts.commented += line in comments or above.startswith("#")
        elif i and code[i - 1].string == "->":
            counts.any_returns += 1
        else:
            counts.bare += 1
    return counts


def at(commit: str, root: str) -> Counts:
    """The figures over ``root`` (the product or the test kit) at ``commit``."""
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, "--", root],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    total = Counts()
    for path in (p for p in listed if p.endswith(".py")):
        show = ["git", "show", f"{commit}:{path}"]
        total.add(count(subprocess.run(show, capture_output=True, text=True, check=True).stdout))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commits", nargs="+", help="commits to count at (e.g. 6b6230c HEAD)")
    args = parser.parse_args()
    print("| commit | where | dict[str, Any] (with a comment) | -> Any | bare Any |")
    print("|---|---|---:|---:|---:|")
    for commit in args.commits:
        for root in ROOTS:
            c = at(commit, root)
            row = f"{c.untyped_dicts} ({c.commented}) | {c.any_returns} | {c.bare}"
            print(f"| {commit} | {root} | {row} |")


if __name__ == "__main__":
    main()
