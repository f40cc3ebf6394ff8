"""`local2 documents` and `local2 ask --attach` as a person runs them: real processes, the
real document worker and index, the Ollama-protocol test server."""

from __future__ import annotations

import json
from pathlib import Path

from local2_testkit import documents as samples
from local2_testkit.hostile_documents import encrypted_pdf
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2

FACT = "The Eling tidal mill was restored by the parish council in 1980."


def report(path: Path) -> Path:
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 6)]
    pages[2].append(FACT)
    path.write_bytes(samples.pdf_of(pages, "Parish report"))
    return path


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    return {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf), **extra}


def test_documents_add_list_show_remove(tmp_path: Path) -> None:
    env = environment(tmp_path)
    pdf = report(tmp_path / "Parish report.pdf")
    added = local2("documents", "add", str(pdf), "--session", "s1", "--json", env=env)
    assert added.returncode == 0, added.stderr
    [record] = json.loads(added.stdout)
    assert record["path"] == "my-documents/Parish report.pdf" and record["pages"] == 5
    assert f"as {record['id']}" in added.stderr and "attached to session s1" in added.stderr
    listed = local2("documents", "list", "--json", env=env)
    assert json.loads(listed.stdout) == [record]
    table = local2("documents", "list", env=env)
    assert record["id"] in table.stdout and "Parish report.pdf" in table.stdout
    shown = local2("documents", "show", record["id"], env=env)
    assert json.loads(shown.stdout) == record
    # Another person's list is their own; local's id is unknown to them.
    assert local2("users", "add", "bob", env=env).returncode == 0
    theirs = local2("--as", "bob", "documents", "list", "--json", env=env)
    assert theirs.returncode == 0, theirs.stderr
    assert json.loads(theirs.stdout) == []
    blind = local2("--as", "bob", "documents", "show", record["id"], env=env)
    assert blind.returncode == 3 and f"No document '{record['id']}'" in blind.stderr
    removed = local2("documents", "remove", record["id"], env=env)
    assert removed.returncode == 0 and "removed Parish report.pdf" in removed.stderr
    assert json.loads(local2("documents", "list", "--json", env=env).stdout) == []
    gone = local2("documents", "remove", record["id"], env=env)
    assert gone.returncode == 3


def test_a_document_that_cannot_be_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    env = environment(tmp_path)
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted_pdf())
    refused = local2("documents", "add", str(locked), env=env)
    assert refused.returncode == 2
    assert "encrypted" in refused.stderr and "without a password" in refused.stderr
    assert json.loads(local2("documents", "list", "--json", env=env).stdout) == []


def test_ask_attach_a_pdf_and_its_passages_are_document_hits(tmp_path: Path) -> None:
    """`local2 ask --attach FILE` against ChatOllama and the Ollama-protocol test server: the
    document is added and attached to the session, its passage for the question is a
    document hit, the answer cites the file and the page, and the critic finds nothing
    unread; a follow-up in the same session searches it again."""
    pdf = report(tmp_path / "report.pdf")
    with FakeOllama(RuleBrain()) as server:
        env = environment(tmp_path, OLLAMA_HOST=server.url)
        asked = local2(
            "ask",
            "When was the Eling tidal mill restored?",
            "--attach",
            str(pdf),
            "--json",
            "--backend",
            "ollama",
            env=env,
        )
        assert asked.returncode == 0, asked.stderr
        payload = json.loads(asked.stdout)
        [hit, *_] = payload["document_hits"]
        assert (hit["file"], hit["page"]) == ("my-documents/report.pdf", 3)
        assert FACT in hit["text"]
        assert (
            "my-documents/report.pdf, page 3" in payload["answer"] and "1980" in payload["answer"]
        )
        assert payload["critique"]["flags"] == []
        follow = local2(
            "ask",
            "Who restored the Eling tidal mill?",
            "--session",
            payload["session_id"],
            "--backend",
            "ollama",
            env=env,
        )
    assert follow.returncode == 0, follow.stderr
    assert "Document hits my-documents/report.pdf page 3" in follow.stderr
    assert "parish council" in follow.stdout
