"""bench/README.md shows the latest table of each benchmark with the command that made it,
and stays short enough to find a figure in (issue 54); earlier rounds are in bench/HISTORY.md.

- every script in bench/ is a benchmark or a helper the page names as one;
- each benchmark has one section, whose heading names the script, with a command line that
  runs it and a table;
- no heading appears twice, and the page stays under ``MAX_LINES`` lines;
- bench/HISTORY.md says it is the record of earlier rounds and points back here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
README = BENCH / "README.md"
HISTORY = BENCH / "HISTORY.md"
MAX_LINES = 900
HELPERS_HEADING = "## Helpers and data builders"
# `bench/x.py`, or `bench/x.py --option` with its options inside the same backticks
SCRIPT_IN_BACKTICKS = re.compile(r"`bench/([\w-]+\.py)(?:`| [^`]*`)")
TABLE_RULE = re.compile(r"^\|\s*:?-{3,}")


@dataclass
class Section:
    heading: str
    prose: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


def sections(path: Path) -> list[Section]:
    """The page's ``##`` sections: each heading, its prose lines and its command lines (the
    lines of fenced blocks and of blocks indented four spaces, comment lines left out)."""
    found: list[Section] = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and line.startswith("## "):
            found.append(Section(line))
            continue
        if not found:
            continue
        if fenced or line.startswith("    "):
            command = line.strip()
            if command and not command.startswith("#"):
                found[-1].commands.append(command)
        else:
            found[-1].prose.append(line)
    return found


def headings(path: Path) -> list[str]:
    """Every heading of the page, at any level, outside code blocks."""
    fenced = False
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line)
    return found


def scripts() -> set[str]:
    return {path.name for path in BENCH.glob("*.py")}


def helpers() -> set[str]:
    """The scripts the helpers section names: a data builder or a piece of another benchmark."""
    return {
        name
        for section in sections(README)
        if section.heading.startswith(HELPERS_HEADING)
        for line in section.prose
        for name in SCRIPT_IN_BACKTICKS.findall(line)
        if (BENCH / name).is_file()
    }


def benchmark_sections() -> dict[str, list[Section]]:
    """The sections whose heading names a script of bench/, by script."""
    found: dict[str, list[Section]] = {}
    for section in sections(README):
        for name in SCRIPT_IN_BACKTICKS.findall(section.heading):
            found.setdefault(name, []).append(section)
    return found


def runs(command: str, script: str) -> bool:
    """The command line runs the script (the name before any comment on the line)."""
    before_comment = re.split(r"\s#\s", command, maxsplit=1)[0]
    return re.search(rf"(?<![\w/])bench/{re.escape(script)}(?!\w)", before_comment) is not None


def test_every_script_is_a_benchmark_with_a_section_or_a_named_helper() -> None:
    """A new script in bench/ gets its section here, or is listed as a helper."""
    unplaced = scripts() - helpers() - set(benchmark_sections())
    assert sorted(unplaced) == [], "no section in bench/README.md for these bench/ scripts"


def test_each_section_names_a_script_that_is_there() -> None:
    stale = set(benchmark_sections()) - scripts()
    assert sorted(stale) == [], "sections of bench/README.md for scripts no longer in bench/"


def test_each_benchmark_has_one_section_with_its_command_and_its_table() -> None:
    """One section a benchmark: the latest table, and the command line that produced it."""
    wrong = []
    for script, found in sorted(benchmark_sections().items()):
        if len(found) != 1:
            wrong.append(f"{script}: {len(found)} sections: {[s.heading for s in found]}")
            continue
        section = found[0]
        if not any(runs(command, script) for command in section.commands):
            wrong.append(f"{script}: no command line in its section runs it")
        if not any(TABLE_RULE.match(line) for line in section.prose):
            wrong.append(f"{script}: no table in its section")
    assert wrong == []


def test_no_heading_appears_twice() -> None:
    twice = [heading for heading, n in Counter(headings(README)).items() if n > 1]
    assert twice == []


def test_the_page_stays_short() -> None:
    """Earlier rounds go to bench/HISTORY.md, so the latest figure is quick to find."""
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_LINES, f"bench/README.md has {lines} lines: move old rounds to HISTORY.md"


def test_history_says_it_is_the_record_and_points_back() -> None:
    opening = HISTORY.read_text(encoding="utf-8").split("\n\n")[1]
    assert "earlier rounds" in opening
    assert "bench/README.md" in opening
