"""A person's own documents, as every surface handles them (``POST /documents``, ``local2
documents``, ``ask --attach``, the app's upload): add one (attached to a session, or not),
list, show, attach, remove; and the configured folders' index, built with a progress bar
(the app's "Index folders", as ``local2 index`` does at a terminal).

Each call is on one person's behalf and touches only their documents
(:class:`local2.files.OwnDocuments`): another person's id answers as an unknown one does. A
document is attached only to a session of the caller's: a session nobody has asked in yet
becomes theirs (as a first question would make it), someone else's answers 404.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.config import Settings
from local2.contracts import DocumentRecord, Person
from local2.errors import InvalidInput
from local2.ids import check_session_id
from local2.service.access import Access

if TYPE_CHECKING:
    from local2.files import Folders, OwnDocuments, Progress, SyncReport


class DocumentDesk:
    """The documents part of the service (``agent.documents``)."""

    def __init__(self, files: Folders | None, access: Access) -> None:
        self.files = files
        self._own_or_none = files.own_documents if files is not None else None
        self.access = access

    @property
    def on(self) -> bool:
        """Whether people may keep documents of their own here (``documents.own``)."""
        return self._own_or_none is not None

    @property
    def own_documents(self) -> OwnDocuments:
        if self._own_or_none is None:
            raise InvalidInput(
                "Documents of your own are off on this server (documents.own: false).",
                "Set own: true in documents.yaml to add documents.",
            )
        return self._own_or_none

    def add(
        self, person: Person, name: str, data: bytes, session_id: str | None = None
    ) -> DocumentRecord:
        """Read, keep and index a document of ``person``'s, attached to ``session_id`` when
        given; refused (nothing kept) when it cannot be read or is over a limit."""
        library = self.own_documents
        if session_id:
            self._claim(person, session_id)
        return library.add(person.name, name, data, session_id)

    def records(self, person: Person) -> list[DocumentRecord]:
        """The person's documents, newest first."""
        return self.own_documents.records(person.name) if self.on else []

    def get(self, person: Person, doc_id: str) -> DocumentRecord:
        return self.own_documents.get(person.name, doc_id)

    def remove(self, person: Person, doc_id: str) -> DocumentRecord:
        return self.own_documents.remove(person.name, doc_id)

    def attach(self, person: Person, doc_id: str, session_id: str) -> DocumentRecord:
        """Attach the person's document to a session of theirs."""
        self.own_documents.get(person.name, doc_id)  # someone else's id: 404 before anything else
        self._claim(person, session_id)
        return self.own_documents.attach(person.name, doc_id, session_id)

    def attached(self, person: Person, session_id: str) -> list[DocumentRecord]:
        """The person's documents attached to ``session_id``."""
        return self.own_documents.attached(person.name, session_id) if self.on else []

    def index_folders(
        self, progress: Progress | None = None, *, rebuild: bool = False
    ) -> SyncReport:
        """Bring the configured folders' index up to date (only what changed is read;
        ``rebuild``: every file embedded again), calling ``progress(done, total, file)`` as
        it goes."""
        return self._folders().index.sync(rebuild=rebuild, progress=progress)

    def check_folders(self) -> None:
        """:class:`~local2.errors.InvalidInput` when none of the configured folders exists
        (nothing to index), before anything is read."""
        self._folders()

    def _folders(self) -> Folders:
        if self.files is None or not self.files.configured:
            raise InvalidInput(
                "No folders to index: none of files.roots is an existing folder.",
                "Add folders to roots: in files.yaml, e.g. roots: [~/notes].",
            )
        return self.files

    def _claim(self, person: Person, session_id: str) -> None:
        check_session_id(session_id)
        self.access.claim_session(person, session_id)


def open_desk(settings: Settings, access: Access | None = None) -> DocumentDesk:
    """A desk for a command that opens no agent (``local2 documents``, ``local2 index``),
    with the owner checks of the conversation store's people (``access``; none: the
    folders' index alone is used, which is everyone's)."""
    from local2.files import Folders  # lazy: local2.files: ~3 ms, 2 modules at MCP start

    return DocumentDesk(Folders(settings), access or Access(None))
