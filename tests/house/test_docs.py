"""The documentation says what the code does: the README is a front door that opens with the
two commands, and each page of docs/ is checked against the thing it describes.

- every ``local2`` command, and each of its options, is in docs/cli.md; every ``local2 ...``
  line in a shell block names a real command and real options;
- every HTTP route of the app is in docs/http.md, and every route the pages name exists;
- every section and key of the shipped settings is in docs/configuration.md, and every
  ``section.key`` any page names exists;
- every link and picture points at a file that is there, and every code block parses.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import pytest
import yaml
from pydantic import BaseModel

from local2 import events
from local2.config._schema import SECTIONS, Settings, WebSearchSettings
from local2.http._app import create_api
from tests.house.helpers import cli_commands

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 150
MAX_PICTURE_BYTES = 400_000
GLOBAL_OPTIONS = {"--config", "--as", "--help"}


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str


def code_blocks(path: Path) -> Iterator[Block]:
    """The fenced code blocks of a Markdown page, with the line each starts on."""
    lines = text(path).splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if not match:
            i += 1
            continue
        start, indent, lang = i, match.group(1), match.group(2)
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i].removeprefix(indent))
            i += 1
        yield Block(path, start + 1, lang, "\n".join(body))
        i += 1


def prose(path: Path) -> str:
    """A page without its code blocks (links and names in prose only)."""
    return re.sub(r"^\s*```.*?^\s*```", "", text(path), flags=re.S | re.M)


# -- the README ---------------------------------------------------------------------------


def test_the_readme_is_a_front_door_that_opens_with_the_two_commands() -> None:
    lines = text(README).splitlines()
    assert len(lines) < MAX_README_LINES, f"README.md: {len(lines)} lines; move reference to docs/"
    content = [line for line in lines[1:] if line.strip()]  # after the title
    assert content[0] == "```sh", f"README.md must open with the two commands, not {content[0]!r}"
    first = next(code_blocks(README))
    commands = [line.split("#")[0].strip() for line in first.body.splitlines()]
    assert commands == ["make app", "make test"], commands
    makefile = text(ROOT / "Makefile")
    assert re.search(r"^app:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "exec make test" in text(ROOT / ".ci" / "run")  # CI runs exactly the README's command
    for needed in ("## The app", "## What it does", "## Read more"):
        assert needed in lines, f"README.md lacks {needed!r}"


def test_the_readme_shows_the_app_in_pictures_and_links_every_page() -> None:
    readme = prose(README)
    pictures = re.findall(r"!\[[^\]]+\]\((docs/images/[^)]+\.png)\)", readme)
    assert len(pictures) >= 3, pictures
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)\)", readme))
    on_disk = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert on_disk <= linked, f"pages the README does not link: {sorted(on_disk - linked)}"


# -- links, pictures, code ----------------------------------------------------------------


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them (``## 6. People``: ``6-people``)."""
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose(page), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_every_link_and_picture_points_at_a_file_that_is_there() -> None:
    broken = []
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_pictures_are_small() -> None:
    pictures = sorted((DOCS / "images").glob("*.png"))
    assert pictures
    for picture in pictures:
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture
        assert picture.stat().st_size < MAX_PICTURE_BYTES, f"{picture.name} is too large"


def test_every_python_yaml_and_json_block_parses() -> None:
    failed = []
    for page in pages():
        for block in code_blocks(page):
            where = f"{page.relative_to(ROOT)}:{block.line}"
            try:
                if block.lang == "python":
                    ast.parse(block.body)
                elif block.lang == "yaml":
                    list(yaml.safe_load_all(block.body))
                elif block.lang == "json":
                    json.loads(block.body)
            except (SyntaxError, yaml.YAMLError, ValueError) as exc:
                failed.append(f"{where} ({block.lang}): {exc}")
    assert failed == []


# -- the command line ---------------------------------------------------------------------


def sections(page: str) -> dict[str, str]:
    """Each ``## `` or ``### `` heading of a page and the text under it, to the next one."""
    parts = re.split(r"^(#{2,3} .+)$", page, flags=re.M)
    return {parts[i].lstrip("#").strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def command_section(path: tuple[str, ...]) -> str | None:
    """The text of docs/cli.md's section of a command (``### `local2 memory` `` for its
    subcommands too), or None."""
    for heading, body in sections(text(DOCS / "cli.md")).items():
        if heading == f"`local2 {path[0]}`":
            return heading + body
    return None


def test_every_command_and_option_is_in_the_cli_page() -> None:
    everything = "\n".join(text(p) for p in pages())
    missing = []
    for path, options in cli_commands().items():
        name = "local2 " + " ".join(path)
        body = command_section(path)
        if body is None:  # a command documented on a page of its own (docs/search.md...)
            if name not in everything:
                missing.append(f"{name}: in no page (add it to docs/cli.md)")
            continue
        if name not in body:
            missing.append(f"{name}: not named in its section of docs/cli.md")
        shared = "\n".join(
            b for h, b in sections(text(DOCS / "cli.md")).items() if h.startswith("`local2")
        )
        for option in sorted(options - GLOBAL_OPTIONS):
            own = re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", body)
            if not own and not (option in ("--model", "--backend") and option in shared):
                missing.append(f"{name} {option}: not in its section of docs/cli.md")
    assert missing == []


def test_the_cli_pages_command_table_lists_every_command() -> None:
    """The table at the top of docs/cli.md is where a newcomer looks first: every command."""
    page = text(DOCS / "cli.md")
    table = "\n".join(line for line in page.splitlines() if line.startswith("| `local2 "))
    listed = set(re.findall(r"`local2 ([a-z-]+)`", table))
    commands = {path[0] for path in cli_commands()}
    assert sorted(commands - listed) == []
    assert sorted(listed - commands) == []


def shell_commands() -> Iterator[tuple[str, list[str]]]:
    """Each ``local2 ...`` command line of the pages' shell blocks, split into words."""
    for page in pages():
        for block in code_blocks(page):
            if block.lang != "sh":
                continue
            for line in block.body.replace("\\\n", " ").splitlines():
                line = line.split(" #")[0].strip()
                try:
                    words = shlex.split(line, comments=True)
                except ValueError:  # a quote opened on the line and closed on another
                    words = line.split()
                while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value local2 ...
                    words = words[1:]
                if words and words[0] == "local2":
                    yield f"{page.relative_to(ROOT)}:{block.line}: {line}", words[1:]


def test_every_local2_line_in_a_shell_block_is_a_real_command_with_real_options() -> None:
    commands = cli_commands()
    wrong = []
    for where, words in shell_commands():
        while words and words[0] in GLOBAL_OPTIONS:
            words = words[2:]
        path = next(
            (p for p in sorted(commands, key=len, reverse=True) if tuple(words[: len(p)]) == p),
            None,
        )
        if path is None:
            wrong.append(f"{where}: no such command")
            continue
        given = {w.split("=")[0] for w in words if w.startswith("--")}
        unknown = given - commands[path] - GLOBAL_OPTIONS
        if unknown:
            wrong.append(f"{where}: {sorted(unknown)} not options of local2 {' '.join(path)}")
    assert wrong == []


# -- the HTTP API -------------------------------------------------------------------------

ROUTE = re.compile(r"\b(GET|POST|DELETE|PUT|PATCH) (/[\w{}/.-]*)")
FRAMEWORK = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}


def app_routes() -> set[tuple[str, str]]:
    """Every (method, path) the API serves. Building the routers asks the agent nothing
    but its settings' shape, so a stand-in agent will do."""
    api = create_api(MagicMock(), who=MagicMock())
    return {
        (method.upper(), path)
        for path, operations in api.openapi()["paths"].items()
        for method in operations
        if path not in FRAMEWORK
    }


def shape(path: str) -> str:
    """A path with its parameters unnamed: ``/research/{id}`` is ``/research/{run_id}``."""
    return re.sub(r"\{[^}]*\}", "{}", path.rstrip("/.") or "/")


def test_every_route_is_in_the_http_page() -> None:
    http = text(DOCS / "http.md")
    everything = "\n".join(text(p) for p in pages())
    missing = [
        f"{method} {path}"
        for method, path in sorted(app_routes())
        if f"`{method} {path}`" not in http and f"{method} {path}" not in everything
    ]
    assert missing == [], "routes docs/http.md does not list"


@pytest.mark.parametrize(
    "page", ["docs/http.md", "docs/research.md", "docs/evals.md", "docs/deploy.md", "docs/chat.md"]
)
def test_every_route_a_page_names_exists(page: str) -> None:
    served = {(method, shape(path)) for method, path in app_routes()}
    served |= {("GET", path) for path in FRAMEWORK}
    named = {(m, shape(p)) for m, p in ROUTE.findall(text(ROOT / page))}
    assert named, page
    assert sorted(named - served) == []


# -- configuration ------------------------------------------------------------------------


def models_of(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """Each field of a settings model, with its own model when it is a nested section."""
    found: dict[str, type[BaseModel] | None] = {}
    fields = dict(model.model_fields)
    if model is WebSearchSettings:  # and each registered search provider's keys
        fields |= WebSearchSettings.provider_fields()
    for name, field in fields.items():
        kind = field.annotation
        found[name] = kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None
    return found


def section_model(section: str) -> type[BaseModel]:
    kind = Settings.model_fields[section].annotation
    assert isinstance(kind, type) and issubclass(kind, BaseModel)
    return kind


def test_every_section_and_key_is_in_the_configuration_page() -> None:
    headings = sections(text(DOCS / "configuration.md"))
    missing = []
    for section in SECTIONS:
        body = next((b for h, b in headings.items() if h.startswith(f"`{section}.yaml`")), None)
        if body is None:
            missing.append(f"{section}.yaml: no section")
            continue
        shipped = yaml.safe_load(
            (ROOT / "src" / "local2" / "config" / f"{section}.yaml").read_text()
        )
        keys = set(models_of(section_model(section))) | set(shipped or {})
        for nested in models_of(section_model(section)).values():
            if nested is not None:
                keys |= set(models_of(nested))
        for key in sorted(keys):
            if not re.search(rf"`(?:[\w.]+\.)?{re.escape(key)}`", body):
                missing.append(f"{section}.{key}")
    assert missing == []


def event_subjects() -> set[str]:
    return {v for v in vars(events).values() if isinstance(v, str) and "." in v}


def resolves(dotted: str) -> bool:
    """Whether ``section.key[.key...]`` is a setting."""
    section, *keys = dotted.split(".")
    model: type[BaseModel] | None = section_model(section)
    for key in keys:
        fields = models_of(model) if model is not None else {}
        if key not in fields:
            return False
        model = fields[key]
    return True


def test_every_setting_a_page_names_exists() -> None:
    names = "|".join(SECTIONS)
    setting = re.compile(rf"`((?:{names})(?:\.[a-z_]+)+)(?::[^`]*)?`")
    subjects = event_subjects()
    wrong = []
    for page in pages():
        for dotted in setting.findall(text(page)):
            if dotted in subjects or re.search(r"\.(py|yaml|md|json)$", dotted):
                continue
            if not resolves(dotted):
                wrong.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert wrong == []


# -- the code the pages point into --------------------------------------------------------

# Where a path a page names may be: the package (``graph/_turn.py``), the repository
# (``bench/overhead.py``), the test kit (``local2_testkit/brains.py``).
CODE_ROOTS = [
    ROOT / "src" / "local2",
    ROOT,
    ROOT / "src",
    ROOT / "testkit" / "src",
    ROOT / "testkit" / "src" / "local2_testkit",
]


def test_every_module_and_name_a_page_points_to_exists() -> None:
    """``service/chat/_turns.py: turn_options`` names a module and something in it; when either
    moves, the page must follow (a bare ``state.py: TurnState`` is looked for anywhere in the
    package and the test kit)."""
    modules = [*(ROOT / "src" / "local2").rglob("*.py"), *(ROOT / "testkit").rglob("*.py")]
    stale = []
    for page in pages():
        body = text(page)
        for path, name in re.findall(r"`([\w.-]+(?:/[\w.-]+)+\.py)(?::\s*([A-Za-z_]\w*))?", body):
            found = next((r / path for r in CODE_ROOTS if (r / path).is_file()), None)
            if found is None:
                stale.append(f"{page.relative_to(ROOT)}: {path}")
            elif name and not re.search(rf"\b{name}\b", found.read_text(encoding="utf-8")):
                stale.append(f"{page.relative_to(ROOT)}: {path}: {name}")
        for module, name in re.findall(r"`(\w+\.py):\s*([A-Za-z_]\w*)", body):
            candidates = [m.read_text(encoding="utf-8") for m in modules if m.name == module]
            if not any(re.search(rf"\b{name}\b", code) for code in candidates):
                stale.append(f"{page.relative_to(ROOT)}: {module}: {name}")
    assert stale == []


# A reference to the design document the project began from: a file a reader of the
# repository does not have (its word is in docs/ now).
OUTSIDE_DESIGN = re.compile(r"\bDESIGN(?:\.md\b|\s*§)")
WRITTEN = ("src", "testkit", "tests", "bench", "docs", "scripts", "examples", "notebooks")


def test_nothing_points_at_the_design_document_outside_the_repository() -> None:
    """The package, the test kit, the tests, the benchmarks and the pages point at the
    repository's own pages (``docs/architecture.md``, "Trust boundaries"), never at a
    section of a design document outside it."""
    files = [README, *(p for d in WRITTEN for p in sorted((ROOT / d).rglob("*")) if p.is_file())]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        if path.suffix in (".py", ".md", ".yaml", ".toml", ".ipynb")
        for n, line in enumerate(text(path).splitlines(), start=1)
        if OUTSIDE_DESIGN.search(line)
    ]
    assert found == []


# -- the way in: each feature's one part --------------------------------------------------

WAY_IN_ROW = re.compile(r"^\| [^|]+ \| `agent\.(\w+)` \(`(\w+)`\) \| ([^|]+) \|$", re.M)


def test_the_way_in_table_names_each_part_of_the_agent_and_its_methods() -> None:
    """docs/architecture.md, "One way in": each row's part is an attribute the agent sets
    (``self.turns = ...``) or a property it has, of the class the row names, and each method
    listed is that class's; every part the agent composes has its row."""
    import inspect

    import local2.service.agent as agent_module
    from local2.service import chat, desks, research
    from local2.service import evals as service_evals
    from local2.service.access import Access

    rows = WAY_IN_ROW.findall(text(DOCS / "architecture.md"))
    assert len(rows) >= 10, "the One way in table is missing or malformed"
    classes: dict[str, Any] = {"Access": Access}
    for face in (chat, desks, research, service_evals):
        classes.update({name: getattr(face, name) for name in face.__all__})
    source = Path(agent_module.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    agent_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Agent")
    built = {  # self.X = SomeClass(...) in the agent's assembly, and its properties
        node.targets[0].attr: ast.unparse(node.value)
        for node in ast.walk(agent_class)
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Attribute)
        and isinstance(node.targets[0].value, ast.Name)
        and node.targets[0].value.id == "self"
    }
    properties = {
        n.name: ast.unparse(n.returns) if n.returns else ""
        for n in agent_class.body
        if isinstance(n, ast.FunctionDef)
        and any(ast.unparse(d) == "property" for d in n.decorator_list)
    }
    wrong = []
    for part, cls_name, listed in rows:
        made = built.get(part, "") or properties.get(part, "")
        if cls_name not in made:
            wrong.append(f"agent.{part} is not a {cls_name} ({made or 'not set'})")
        cls = classes.get(cls_name)
        if cls is None:
            wrong.append(f"{cls_name}: not on a service feature's face")
            continue
        for method in re.findall(r"`(\w+)`", listed):
            own_attribute = re.search(rf"self\.{method}\b\s*[:=]", inspect.getsource(cls))
            if not hasattr(cls, method) and not own_attribute:
                wrong.append(f"{cls_name}.{method}: no such method")
    parts = {n for n, made in built.items() if made.split("(")[0] in classes and n[0] != "_"}
    parts |= {name for name, returns in properties.items() if returns in classes}
    missing = parts - {part for part, _, _ in rows}
    assert wrong == [] and missing == set(), (wrong, missing)
