"""A person's own documents over HTTP: ``POST /documents`` (multipart ``file``, optional
``session_id``), ``GET /documents``, ``GET /documents/{id}``, ``DELETE /documents/{id}`` and
``POST /documents/{id}/sessions/{session_id}`` (attach to another session).

Each request is one person's and sees only their documents: another person's id answers
404 exactly as an unknown one does. An upload is read as it arrives and refused with 413,
naming the limit, as soon as it is over ``documents.max_bytes`` (the body is never kept
whole on disk first); one that cannot be read (encrypted, damaged, over a page limit) is
422; either way nothing of it is stored.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from local2.contracts import DocumentRecord
from local2.errors import DocumentTooLarge, InvalidInput
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent

_MB = 1024 * 1024
FORM_OVERHEAD = 64 * 1024  # the multipart framing and the session_id field around the file

UPLOAD_BODY: dict[str, Any] = {  # OpenAPI's requestBody object, for openapi_extra
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "session_id": {
                            "type": "string",
                            "description": "Attach it to this session of yours: it is then "
                            "searched for each of the session's questions.",
                        },
                    },
                }
            }
        },
    }
}


def too_large(limit: int) -> DocumentTooLarge:
    return DocumentTooLarge(
        f"The upload is over the limit of {limit / _MB:,.1f} MB (documents.max_bytes).",
        "too_large",
        fix="Split the document, or raise documents.max_bytes in documents.yaml.",
    )


async def capped(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request's body, refused the moment it is over ``limit`` bytes."""
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit + FORM_OVERHEAD:
            raise too_large(limit)
        yield chunk


async def uploaded(request: Request, limit: int) -> tuple[str, bytes, str | None]:
    """The uploaded file's name and bytes, and the session id, from a multipart body."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise too_large(limit)  # refused before a byte of it is read
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise InvalidInput("Send the document as multipart/form-data, in a field named 'file'.")
    parser = MultiPartParser(request.headers, capped(request, limit), max_files=1, max_fields=2)
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise InvalidInput(f"The upload is not a form LoCAL2 can read: {exc.message}") from None
    try:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise InvalidInput("No file in the upload: send it in a field named 'file'.")
        data = await file.read()
        session = form.get("session_id")
        return file.filename or "document", data, session if isinstance(session, str) else None
    finally:
        await form.close()


def document_routes(agent: Agent) -> APIRouter:
    """The ``/documents`` routes over ``agent.documents``."""
    router = APIRouter(tags=["documents"])
    limit = agent.settings.documents.max_bytes

    @router.post(
        "/documents",
        status_code=201,
        openapi_extra=UPLOAD_BODY,
        **returns(DocumentRecord, "The document, read, kept and indexed."),
    )
    async def add(person: Caller, request: Request) -> DocumentRecord:
        """Add a document of yours (PDF, DOCX, PPTX, ODT, EPUB, HTML, Markdown or text):
        it is read, kept under the data directory and indexed, and ``search_files`` and
        ``read_file`` find it in every session of yours (as ``my-documents/<name>``). With
        ``session_id`` it is also attached to that session. 413 over ``documents.max_bytes``
        or your room for documents; 422 when it cannot be read; nothing is kept then."""
        name, data, session_id = await uploaded(request, limit)
        return await run_in_threadpool(agent.documents.add, person, name, data, session_id)

    @router.get("/documents", **returns(list[DocumentRecord], "Your documents, newest first."))
    def documents(person: Caller) -> list[DocumentRecord]:
        """Your documents, newest first."""
        return agent.documents.records(person)

    @router.get("/documents/{doc_id}", **returns(DocumentRecord))
    def document(person: Caller, doc_id: str) -> DocumentRecord:
        """One of your documents (404 for any other id)."""
        return agent.documents.get(person, doc_id)

    @router.delete("/documents/{doc_id}", **returns(DocumentRecord, "The document removed."))
    def remove(person: Caller, doc_id: str) -> DocumentRecord:
        """Remove one of your documents: its file, its passages in your index, its record."""
        return agent.documents.remove(person, doc_id)

    @router.post(
        "/documents/{doc_id}/sessions/{session_id}",
        **returns(DocumentRecord, "The document, now attached to the session."),
    )
    def attach(person: Caller, doc_id: str, session_id: str) -> DocumentRecord:
        """Attach one of your documents to a session of yours (one nobody has asked in yet
        becomes yours): it is searched for each of that session's questions."""
        return agent.documents.attach(person, doc_id, session_id)

    return router
