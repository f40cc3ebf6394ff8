"""`local2 library` as a person runs it: real processes over a library kept by a real
fetch-shaped read (the same store the service writes), and `local2 research --sources
library` answering from it with the Ollama-protocol test server and no web at all."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from local2.config import load_settings
from local2.library import Fetched, Reader, ReadingLibrary
from local2_testkit import documents as samples
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.kit.helpers import local2

FACT = "The Eling tidal mill grinds 400 kilograms of flour on a spring tide."
URL = "http://mills.example/report.pdf"


def environment(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "memory.yaml").write_text("embedder: lexical\nenabled: false\n")
    (conf / "files.yaml").write_text("embedder: lexical\n")
    (conf / "critic.yaml").write_text("enabled: false\n")
    return {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf), "COLUMNS": "200"}


def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = environment(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 8)]
    pages[5].append(FACT)
    texts = tuple((n, " ".join(p)) for n, p in enumerate(pages, start=1))
    data = samples.pdf_of(pages, "Mill report")
    library = ReadingLibrary(load_settings())
    library.keep(Fetched(URL, URL, "Mill report", "pdf", texts, data), Reader("research", "r1"))
    assert library.settle(60)  # indexed, as a run's end leaves it, before another process looks
    return env


def test_library_list_search_show_pin_export_import_remove(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = seeded(tmp_path, monkeypatch)
    listed = local2("library", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["url"] == URL and entry["pages"] == 7
    table = local2("library", "list", env=env)
    assert entry["id"] in table.stdout and "mills.example" in table.stdout
    found = local2("library", "search", "flour on a spring tide", env=env)
    assert found.returncode == 0, found.stderr
    assert f"{URL}#page=6" in found.stdout and "by run r1" in found.stdout
    shared = local2("search", "flour on a spring tide", "--in", "library", env=env)  # as the
    assert shared.returncode == 0, shared.stderr  # agent's own-text search shows it
    head, read, passage = shared.stdout.splitlines()[:3]
    assert head.startswith(f"[1] {URL}#page=6  score ") and "400 kilograms" in passage
    assert read.strip().startswith(f"Mill report ({entry['id']}, read ") and "by run r1" in read
    shown = local2("library", "show", entry["id"], "--page", "6", "--text", env=env)
    assert FACT in shown.stdout
    assert local2("library", "pin", entry["id"], env=env).returncode == 0
    zipped = tmp_path / "library.zip"
    assert local2("library", "export", str(zipped), env=env).returncode == 0
    assert "library.json" in zipfile.ZipFile(zipped).namelist()
    assert local2("users", "add", "bob", env=env).returncode == 0
    blind = local2("--as", "bob", "library", "show", entry["id"], env=env)
    assert blind.returncode != 0 and "No entry" in blind.stderr
    moved = local2("--as", "bob", "library", "import", str(zipped), env=env)
    assert moved.returncode == 0 and "imported 1" in moved.stderr
    removed = local2("library", "remove", entry["id"], env=env)
    assert removed.returncode == 0 and "removed" in removed.stderr
    assert json.loads(local2("library", "list", "--json", env=env).stdout) == []
    theirs = json.loads(local2("--as", "bob", "library", "list", "--json", env=env).stdout)
    assert [e["url"] for e in theirs] == [URL] and theirs[0]["pinned"]


def test_research_from_the_library_at_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = seeded(tmp_path, monkeypatch)
    with FakeOllama(ResearchBrain()) as fake:
        conf = Path(env["LOCAL2_CONFIG"])
        (conf / "system.yaml").write_text(f"ollama_host: {fake.url}\n")
        (conf / "generator.yaml").write_text("backend: ollama\n")
        (conf / "web.yaml").write_text(
            "search:\n  provider: searxng\n  searxng_url: http://127.0.0.1:9\n"
        )
        done = local2(
            "research",
            "How much flour does the Eling tidal mill grind?",
            "--sources",
            "library",
            "--keep",
            "off",
            "--max-rounds",
            "1",
            "--json",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    assert "Sources: your library only (no network)." in done.stderr
    assert "Keeping nothing this run reads (keep: off)." in done.stderr
    payload = json.loads(done.stdout)
    assert payload["sources"] and all(s["url"].startswith(URL) for s in payload["sources"])
