"""``GET /search`` over the real HTTP API: a person's documents found for them with the page
and the passage, never for another person; the contract's shape; a bad ``in`` is 422."""

from __future__ import annotations

from typing import Any

from tests.documents.helpers import ALICE_FACT, pdf_with, upload


def test_search_finds_a_persons_document_for_them_alone(team: dict[str, Any]) -> None:
    alice, bob = team["alice"], team["bob"]
    assert upload(alice, "Parish report.pdf", pdf_with(ALICE_FACT)).status_code == 201
    found = alice.get("/search", params={"q": "Eling tidal mill restored", "in": "documents"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["query"] == "Eling tidal mill restored"
    top = body["hits"][0]
    assert set(top) == {"source", "path", "page", "score", "passage", "why"}
    assert (top["source"], top["path"], top["page"]) == (
        "documents",
        "my-documents/Parish report.pdf",
        3,
    )
    assert ALICE_FACT in top["passage"] and top["why"]["bm25_rank"] == 1
    assert set(top["why"]) == {"bm25_rank", "vector_rank", "linked_rank", "linked_from", "reranked"}
    theirs = bob.get("/search", params={"q": "Eling tidal mill restored", "in": "documents"})
    assert theirs.status_code == 200 and theirs.json()["hits"] == []
    assert alice.get("/search", params={"q": "mill", "in": "elsewhere"}).status_code == 422
    assert alice.get("/search", params={"q": "mill", "k": 0}).status_code == 422
