"""A person's own documents over the real HTTP API (uvicorn, httpx, the Ollama-protocol
server): upload, list, show, attach, remove; a document attached to a session gives each of
its questions document hits; two people tried crosswise (another's id answers exactly as an
unknown one, their passages never reach the other's prompt); an upload over a limit is
refused naming it, and nothing of it stays."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from local2.service.agent import Agent
from local2_testkit.hostile_documents import encrypted_pdf
from tests.documents.helpers import ALICE_FACT, PDF, pdf_with, upload

BOB_FACT = "The Hurst lighthouse lantern burns paraffin from October to March."


def documents_folder(agent: Agent, person: str) -> Path:
    library = agent.documents.own_documents
    return library.folder(person)


def test_upload_attach_ask_and_remove(team: dict[str, Any]) -> None:
    alice, agent = team["alice"], team["agent"]
    added = upload(alice, "Parish report.pdf", pdf_with(ALICE_FACT), "alice-1")
    assert added.status_code == 201, added.text
    record = added.json()
    assert record["path"] == "my-documents/Parish report.pdf" and record["pages"] == 5
    assert record["sessions"] == ["alice-1"] and record["id"].startswith("doc-")
    assert alice.get("/documents").json() == [record]
    assert alice.get(f"/documents/{record['id']}").json() == record

    asked = alice.post(
        "/query",
        json={"query": "When was the Eling tidal mill restored?", "session_id": "alice-1"},
    )
    assert asked.status_code == 200, asked.text
    payload = asked.json()
    hits = payload["document_hits"]
    assert hits and hits[0]["file"] == "my-documents/Parish report.pdf"
    assert hits[0]["page"] == 3 and hits[0]["document_id"] == record["id"]
    assert ALICE_FACT in hits[0]["text"]
    assert "documents.recall" in payload["events"]
    assert "my-documents/Parish report.pdf, page 3" in payload["answer"]
    assert "1980" in payload["answer"]
    # Another session of hers has nothing attached: no hits, the document stays searchable.
    other = alice.post("/query", json={"query": "Eling tidal mill?", "session_id": "alice-2"})
    assert other.json()["document_hits"] == []

    removed = alice.delete(f"/documents/{record['id']}")
    assert removed.status_code == 200 and removed.json()["id"] == record["id"]
    assert alice.get("/documents").json() == []
    folder = documents_folder(agent, "alice")
    assert list((folder / "files").iterdir()) == [] and list((folder / "records").iterdir()) == []
    again = alice.post("/query", json={"query": "Eling tidal mill?", "session_id": "alice-1"})
    assert again.json()["document_hits"] == []


def test_two_people_crosswise(team: dict[str, Any]) -> None:
    alice, bob, fake, agent = team["alice"], team["bob"], team["fake"], team["agent"]
    mine = upload(alice, "mill.pdf", pdf_with(ALICE_FACT), "alice-1").json()
    theirs = upload(bob, "lights.pdf", pdf_with(BOB_FACT), "bob-1").json()
    unknown = "doc-000000000000"

    # Bob reaching for Alice's document gets exactly what an unknown id gets.
    for method, path in (
        ("GET", "/documents/{}"),
        ("DELETE", "/documents/{}"),
        ("POST", "/documents/{}/sessions/bob-1"),
    ):
        aimed = bob.request(method, path.format(mine["id"]))
        blind = bob.request(method, path.format(unknown))
        assert aimed.status_code == blind.status_code == 404, aimed.text
        assert aimed.json()["detail"].replace(mine["id"], unknown) == blind.json()["detail"]
    assert bob.get("/documents").json() == [theirs]
    assert alice.get("/documents").json() == [mine]
    # ... nor may he attach his own to her session (as if it were unknown), nor upload to it.
    attach = bob.post(f"/documents/{theirs['id']}/sessions/alice-1")
    assert attach.status_code == 404 and "alice-1" in attach.json()["detail"]
    assert upload(bob, "x.pdf", pdf_with(BOB_FACT), "alice-1").status_code == 404
    assert [r["name"] for r in bob.get("/documents").json()] == ["lights.pdf"]

    # Bob's questions, in his session and through the file tools, never see her passages.
    before = len(fake.chat_requests)
    for query in (
        "When was the Eling tidal mill restored?",
        "What do my documents say about the Eling tidal mill?",  # search_files, read_file
    ):
        asked = bob.post("/query", json={"query": query, "session_id": "bob-1"})
        assert asked.status_code == 200, asked.text
        payload = asked.json()
        assert all(h["document_id"] == theirs["id"] for h in payload["document_hits"])
        assert all("mill.pdf" not in json.dumps(c) for c in payload["tool_calls"])
    sent = json.dumps(fake.chat_requests[before:])
    assert "1980" not in sent and "mill.pdf" not in sent and "Eling tidal mill was" not in sent
    # Alice's still answers from hers.
    hers = alice.post(
        "/query", json={"query": "When was the Eling tidal mill restored?", "session_id": "alice-1"}
    ).json()
    assert hers["document_hits"][0]["document_id"] == mine["id"]
    assert documents_folder(agent, "alice") != documents_folder(agent, "bob")


def test_uploads_over_a_limit_or_unreadable_leave_nothing(team: dict[str, Any]) -> None:
    alice, agent = team["alice"], team["agent"]
    big = pdf_with(ALICE_FACT, pages=200)
    assert len(big) > 50_000 + 65536  # over the limit with the form around it
    declared = upload(alice, "big.pdf", big)
    assert declared.status_code == 413
    assert "documents.max_bytes" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: refused as the bytes arrive
        boundary = b"--xyz\r\n"
        yield boundary + b'Content-Disposition: form-data; name="file"; filename="b.pdf"\r\n'
        yield b"Content-Type: application/pdf\r\n\r\n"
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]
        yield b"\r\n--xyz--\r\n"

    streamed = alice.post(
        "/documents",
        content=chunks(),
        headers={"Content-Type": "multipart/form-data; boundary=xyz"},
    )
    assert streamed.status_code == 413, streamed.text
    assert "documents.max_bytes" in streamed.json()["detail"]

    locked = upload(alice, "locked.pdf", encrypted_pdf())
    assert locked.status_code == 422 and "encrypted" in locked.json()["detail"]
    not_a_form = alice.post("/documents", content=b"%PDF-1.7", headers={"Content-Type": PDF})
    assert not_a_form.status_code == 422 and "multipart/form-data" in not_a_form.text

    assert alice.get("/documents").json() == []
    folder = documents_folder(agent, "alice")
    left = [p.name for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    assert left == []
    ok = upload(alice, "ok.pdf", pdf_with(ALICE_FACT))  # and the next one works
    assert ok.status_code == 201, ok.text


def test_the_documents_routes_are_documented(team: dict[str, Any]) -> None:
    spec = team["alice"].get("/openapi.json").json()
    post = spec["paths"]["/documents"]["post"]
    schema = post["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["required"] == ["file"] and "session_id" in schema["properties"]
    assert "413" in post["responses"]
    listed = spec["paths"]["/documents"]["get"]["responses"]["200"]
    assert "DocumentRecord" in json.dumps(listed)
    assert set(spec["paths"]["/documents/{doc_id}"]) == {"get", "delete"}
