"""The package's shape, beside an earlier tree's: sizes, modules at the root, import circles.

Read from the source alone (``ast``), so both trees are measured the same way:
- the largest module and class, test doubles (``local2_testkit``) aside;
- modules loose at the package root (``__init__`` aside);
- import circles: strongly connected groups of ``local2`` modules, counting imports inside
  functions; ``from pkg import submodule`` counts as importing the submodule, as
  import-linter (grimp) counts it.

    .venv/bin/python bench/shape.py [--baseline-tree ../earlier-worktree]
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

Graph = dict[str, set[str]]


@dataclass
class Shape:
    modules: int
    lines: int
    largest_module: tuple[str, int]
    largest_class: tuple[str, int]
    root_modules: int
    circles: list[list[str]]


def module_names(src: Path) -> dict[str, Path]:
    names = {}
    for path in (src / "local2").rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported(node: ast.AST, module: str, is_package: bool, names: dict[str, Path]) -> list[str]:
    """The ``local2`` modules an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([base] if base else [])])
    subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in names]
    return subs if len(subs) == len(node.names) else [base, *subs]


def import_graph(src: Path) -> Graph:
    names = module_names(src)
    graph: Graph = {m: set() for m in names}
    for module, path in names.items():
        for node in ast.walk(ast.parse(path.read_text())):
            for target in imported(node, module, path.name == "__init__.py", names):
                while target and target not in names:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def shape(tree: Path) -> Shape:
    src = tree / "src"
    package = src / "local2"
    paths = list(package.rglob("*.py"))
    lines = {p: len(p.read_text().splitlines()) for p in paths}
    real = {p: n for p, n in lines.items() if "testing" not in p.relative_to(package).parts}
    largest = max(real, key=lambda p: real[p])
    classes = [
        (node.end_lineno - node.lineno + 1, f"{p.relative_to(package)}:{node.name}")
        for p in real
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and node.end_lineno is not None
    ]
    size, name = max(classes)
    return Shape(
        modules=len(paths),
        lines=sum(lines.values()),
        largest_module=(str(largest.relative_to(package)), real[largest]),
        largest_class=(name, size),
        root_modules=sum(1 for p in package.glob("*.py") if p.name != "__init__.py"),
        circles=circles(import_graph(src)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-tree", type=Path, help="an earlier commit's worktree")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    trees = [("this tree", here)]
    if args.baseline_tree:
        trees.insert(0, (f"baseline `{args.baseline_tree}`", args.baseline_tree))
    print("| | " + " | ".join(name for name, _ in trees) + " |")
    print("|---|" + "---:|" * len(trees))
    shapes = [shape(tree) for _, tree in trees]
    rows = {
        "largest class": [f"{s.largest_class[0]} {s.largest_class[1]}" for s in shapes],
        "largest module": [f"{s.largest_module[0]} {s.largest_module[1]}" for s in shapes],
        "modules at the package root": [str(s.root_modules) for s in shapes],
        "import circles (modules in them)": [
            f"{len(s.circles)} ({sum(len(c) for c in s.circles)})" for s in shapes
        ],
        "modules / lines": [f"{s.modules} / {s.lines:,}" for s in shapes],
    }
    for label, cells in rows.items():
        print(f"| {label} | " + " | ".join(cells) + " |")
    for (name, _), s in zip(trees, shapes, strict=True):
        for group in s.circles:
            print(f"\n{name} circle: {' '.join(group)}", file=sys.stderr)


if __name__ == "__main__":
    main()
