"""The file sandbox: every way out of the allowed folders is refused with a typed error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local2.errors import SandboxError, ToolError
from local2.files._sandbox import (
    AMBIGUOUS_PATH,
    FILE_NOT_FOUND,
    FILE_TOO_LARGE,
    NOT_TEXT,
    PATH_DENIED,
    Sandbox,
)
from local2.tools._registry import default_tools
from tests.kit.helpers import make_settings

EXTS = [".md", ".txt", ".json", ".csv", ".py", ".yaml"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """notes/ with ordinary files, hidden ones, a binary, a big file and an outside secret."""
    notes = tmp_path / "notes"
    (notes / "projects").mkdir(parents=True)
    (notes / ".git").mkdir()
    (notes / "budget.md").write_text("# Budget\nGarden: 1200 euros.\n")
    (notes / "projects" / "plan.txt").write_text("Plan: build a shed.\n")
    (notes / ".env").write_text("API_KEY=sk-hidden\n")
    (notes / ".git" / "config.txt").write_text("hidden folder\n")
    (notes / "script.sh").write_text("echo hi\n")
    (notes / "README").write_text("no extension\n")
    (notes / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (notes / "big.txt").write_text("x" * 5000)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET outside the root\n")
    return tmp_path


def sandbox(*roots: Path, max_bytes: int = 4096) -> Sandbox:
    return Sandbox(list(roots), EXTS, max_bytes)


def code_of(box: Sandbox, path: str) -> str:
    with pytest.raises(SandboxError) as info:
        box.resolve(path)
    assert str(info.value).startswith(f"{info.value.code}: ")
    assert isinstance(info.value, ToolError)  # so the graph shows it as [tool error: ...]
    return info.value.code


def test_plain_and_labelled_paths_resolve(tree: Path) -> None:
    box = sandbox(tree / "notes")
    ref = box.resolve("budget.md")
    assert ref.path == (tree / "notes" / "budget.md").resolve()
    assert ref.display == "notes/budget.md"
    assert box.resolve("notes/budget.md").path == ref.path
    assert box.resolve("./projects/plan.txt").display == "notes/projects/plan.txt"
    assert box.resolve("plan.txt").display == "notes/projects/plan.txt"  # unique bare name


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "../../etc/passwd",
        "projects/../../outside/secret.txt",
        "..\\outside\\secret.txt",
        "notes/../../outside/secret.txt",
    ],
)
def test_traversal_is_denied(tree: Path, path: str) -> None:
    assert code_of(sandbox(tree / "notes"), path) == PATH_DENIED


def test_absolute_and_home_paths_are_denied_even_inside_a_root(tree: Path) -> None:
    box = sandbox(tree / "notes")
    inside = str(tree / "notes" / "budget.md")
    for path in (inside, "/etc/passwd", "~/.ssh/id_rsa", "~/notes.md", "file:///etc/hosts.txt"):
        assert code_of(box, path) == PATH_DENIED, path
    with pytest.raises(SandboxError, match="absolute paths are not allowed"):
        box.resolve("/etc/passwd")


def test_hidden_files_and_folders_are_denied(tree: Path) -> None:
    box = sandbox(tree / "notes")
    assert code_of(box, ".env") == PATH_DENIED
    assert code_of(box, ".git/config.txt") == PATH_DENIED
    with pytest.raises(SandboxError, match="hidden"):
        box.resolve(".env")


def test_disallowed_extensions_are_denied(tree: Path) -> None:
    box = sandbox(tree / "notes")
    assert code_of(box, "script.sh") == PATH_DENIED
    assert code_of(box, "README") == PATH_DENIED
    with pytest.raises(SandboxError, match=r"file type '\.sh' is not allowed"):
        box.resolve("script.sh")
    assert box.resolve("BUDGET.MD".lower()).display == "notes/budget.md"


def test_symlink_escape_is_denied(tree: Path) -> None:
    notes = tree / "notes"
    (notes / "leak.txt").symlink_to(tree / "outside" / "secret.txt")
    (notes / "elsewhere").symlink_to(tree / "outside", target_is_directory=True)
    (notes / "env.txt").symlink_to(notes / ".env")  # inside the root, but to a hidden file
    box = sandbox(notes)
    assert code_of(box, "leak.txt") == PATH_DENIED
    assert code_of(box, "elsewhere/secret.txt") == PATH_DENIED
    assert code_of(box, "env.txt") == PATH_DENIED
    listed = {r.display for r in box.walk()}
    assert "notes/leak.txt" not in listed and "notes/env.txt" not in listed
    assert not any("secret" in name for name in listed)


def test_symlink_inside_the_root_is_followed(tree: Path) -> None:
    notes = tree / "notes"
    (notes / "alias.md").symlink_to(notes / "budget.md")
    assert sandbox(notes).resolve("alias.md").display == "notes/budget.md"


def test_ambiguous_bare_name(tree: Path) -> None:
    notes = tree / "notes"
    (notes / "2024").mkdir()
    (notes / "2025").mkdir()
    (notes / "2024" / "todo.md").write_text("old\n")
    (notes / "2025" / "todo.md").write_text("new\n")
    box = sandbox(notes)
    with pytest.raises(SandboxError) as info:
        box.resolve("todo.md")
    assert info.value.code == AMBIGUOUS_PATH
    assert "notes/2024/todo.md" in str(info.value) and "notes/2025/todo.md" in str(info.value)
    assert box.resolve("2025/todo.md").path.read_text() == "new\n"


def test_same_name_in_two_roots_is_ambiguous_until_labelled(tree: Path) -> None:
    work = tree / "work"
    work.mkdir()
    (work / "budget.md").write_text("# Work budget\n")
    box = sandbox(tree / "notes", work)
    assert code_of(box, "budget.md") == AMBIGUOUS_PATH
    assert box.resolve("work/budget.md").path.read_text() == "# Work budget\n"
    assert box.resolve("notes/budget.md").display == "notes/budget.md"


def test_root_given_as_a_symlink(tree: Path) -> None:
    link = tree / "my-notes"
    link.symlink_to(tree / "notes", target_is_directory=True)
    box = sandbox(link)
    ref = box.resolve("budget.md")
    assert ref.display == "my-notes/budget.md"
    assert ref.path == (tree / "notes" / "budget.md").resolve()
    assert code_of(box, "../outside/secret.txt") == PATH_DENIED
    assert {r.display for r in box.walk()} >= {"my-notes/budget.md", "my-notes/projects/plan.txt"}


def test_file_over_the_size_cap(tree: Path) -> None:
    box = sandbox(tree / "notes", max_bytes=4096)
    ref = box.resolve("big.txt")
    with pytest.raises(SandboxError) as info:
        box.read_text(ref)
    assert info.value.code == FILE_TOO_LARGE
    assert "4.9 KB" in str(info.value) and "4.0 KB" in str(info.value)
    assert sandbox(tree / "notes", max_bytes=10_000).read_text(ref)[0] == "x" * 5000


def test_binary_file_is_not_text(tree: Path) -> None:
    box = sandbox(tree / "notes")
    with pytest.raises(SandboxError) as info:
        box.read_text(box.resolve("image.md"))
    assert info.value.code == NOT_TEXT


def test_latin1_text_is_still_text(tree: Path) -> None:
    notes = tree / "notes"
    (notes / "café.txt").write_bytes("Le café coûte deux euros à Zürich.\n".encode("latin-1"))
    text, _ = sandbox(notes).read_text(sandbox(notes).resolve("café.txt"))
    assert "café" in text and "Zürich" in text


def test_missing_file(tree: Path) -> None:
    box = sandbox(tree / "notes")
    assert code_of(box, "nowhere.md") == FILE_NOT_FOUND
    assert code_of(box, "projects/nowhere.md") == FILE_NOT_FOUND


def test_walk_lists_only_allowed_files(tree: Path) -> None:
    names = {r.display for r in sandbox(tree / "notes").walk()}
    assert names == {
        "notes/budget.md",
        "notes/projects/plan.txt",
        "notes/image.md",
        "notes/big.txt",
    }


def test_missing_root_is_ignored(tree: Path) -> None:
    box = sandbox(tree / "no-such-folder", tree / "notes")
    assert [r.label for r in box.roots] == ["notes"]


FILE_TOOLS = {
    "read_file",
    "list_files",
    "grep_files",
    "directory_tree",
    "file_metadata",
    "search_files",
}


def test_which_file_tools_are_offered(tmp_path: Path) -> None:
    """None with no folder and people's own documents off; the three that find and read
    documents for people's own (the default); all six with a folder configured."""
    off = make_settings(tmp_path, documents={"own": False})
    assert off.files.roots == []
    assert not {t.name for t in default_tools(off, None)} & {"read_file", "search_files"}
    own = {t.name for t in default_tools(make_settings(tmp_path), None)}
    assert own & FILE_TOOLS == {"read_file", "list_files", "search_files"}
    (tmp_path / "notes").mkdir()
    on = make_settings(tmp_path, files={"roots": [str(tmp_path / "notes")]})
    assert {t.name for t in default_tools(on, None)} >= FILE_TOOLS


def test_extensions_setting_is_normalised(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, files={"extensions": ["MD", ".Txt"]})
    assert settings.files.extensions == [".md", ".txt"]


def test_unreadable_name_characters(tree: Path) -> None:
    assert code_of(sandbox(tree / "notes"), "budget\x00.md") == PATH_DENIED
    assert os.path.exists(tree / "notes" / "budget.md")
