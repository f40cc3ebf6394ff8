"""What the documents tests share: PDFs made to order and uploaded over HTTP, folders of mixed
documents and a reader that counts its reads, a corpus for the folder index and its recall@k."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import httpx

from local2.config import DocumentsSettings
from local2.documents import Document, read_document
from local2.files import FileIndex, Folders
from local2.tools._base import Tool, ToolContext, ToolResult
from local2.tools._files import file_tools
from local2_testkit import documents as samples
from tests.kit.helpers import make_settings

PDF = "application/pdf"


ALICE_FACT = "The Eling tidal mill was restored by the parish council in 1980."


def pdf_with(fact: str, page: int = 3, pages: int = 5) -> bytes:
    return samples.pdf_of(
        [
            [" ".join(samples.sentences(n, 4))] + ([fact] if n == page else [])
            for n in range(1, pages + 1)
        ]
    )


def upload(client: httpx.Client, name: str, data: bytes, session: str | None = None) -> Any:
    form = {"session_id": session} if session else None
    return client.post("/documents", files={"file": (name, data, PDF)}, data=form)


CTX = ToolContext(session_id="s", query_id="q")


# Facts no model knows, one per document, each on a page of its own.
MILL = "The Eling tidal mill was restored by the parish council in 1980."


LANTERN = "The Hurst lighthouse lantern burns paraffin from October to March."


FERRY = "The Kelsby ferry timetable lists eleven crossings on Sundays."


WHARF = "Quarryman Oswin Tadley repaired the wharf crane with ash timber."


ALMANAC = "Almanac note: herring shoals arrive when the hawthorn blossoms."


def filler(seed: int) -> str:
    return " ".join(samples.sentences(seed, 5))


def mixed_folder(root: Path) -> dict[str, tuple[str, int, str]]:
    """A folder of documents of every kind, and for each fact: (question, file, page)."""
    root.mkdir(parents=True, exist_ok=True)
    pdf = [[filler(n)] for n in range(1, 7)]
    pdf[3].append(MILL)
    (root / "report.pdf").write_bytes(samples.pdf_of(pdf, "Parish report"))
    (root / "lights.docx").write_bytes(
        samples.docx_of([[filler(11)], [filler(12), LANTERN], [filler(13)]])
    )
    (root / "ferry.pptx").write_bytes(
        samples.pptx_of([("Ferries", filler(21)), ("Timetable", FERRY), ("Fares", filler(22))])
    )
    (root / "notes.odt").write_bytes(samples.odt_sample().data)
    (root / "tales.epub").write_bytes(samples.epub_sample().data)
    (root / "wharf.html").write_text(
        f"<html><head><title>Wharf</title></head><body><p>{filler(31)}</p>"
        f"<p>{WHARF}</p></body></html>"
    )
    (root / "almanac.md").write_text(f"# Almanac\n\n{filler(41)}\n\n{ALMANAC}\n")
    return {
        "mill": ("When was the Eling tidal mill restored?", "report.pdf", 4),
        "lantern": ("What does the Hurst lighthouse lantern burn?", "lights.docx", 2),
        "ferry": ("How many Kelsby ferry crossings on Sundays?", "ferry.pptx", 2),
        "wharf": ("Who repaired the wharf crane?", "wharf.html", 1),
    }


class CountingReader:
    """The real document worker, counting what it is asked to read (and optionally held
    until released, to stand for a slow build)."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.names: list[str] = []
        self.deadlines: list[float | None] = []  # the caller's, each reading's
        self.hold = hold
        self.started = threading.Event()

    def __call__(
        self, data: bytes, cfg: DocumentsSettings, *, name: str, deadline: float | None = None
    ) -> Document:
        self.names.append(name)
        self.deadlines.append(deadline)
        self.started.set()
        if self.hold is not None:
            assert self.hold.wait(120), "the test never released the reader"
        return read_document(data, cfg, name=name, deadline=deadline)


def setup(tmp_path: Path, reader: CountingReader | None = None, **files: Any):
    folder = tmp_path / "papers"
    facts = mixed_folder(folder)
    settings = make_settings(
        tmp_path,
        files={"roots": [str(folder)], "embedder": "lexical", **files},
        memory={"embedder": "lexical"},
    )
    folders = Folders(settings, reader=reader)
    tools = {t.name: t for t in file_tools(settings, folders=folders)}
    return settings, folders, tools, facts


def run(tool: Tool, **args: Any) -> ToolResult:
    out = tool.run(args, CTX)
    return out if isinstance(out, ToolResult) else ToolResult(text=out)


# Invented facts (no model knows them) and the question a person would ask, in other words.
PLANTED = [
    (
        "garden.md",
        "The garden budget for 2025 is 1200 euros, approved by Marta.",
        "How much money can we spend on the garden this year?",
    ),
    (
        "wifi.txt",
        "The cabin wifi password is larch-meadow-42.",
        "What is the password for the internet at the cabin?",
    ),
    (
        "office.md",
        "The office door code changed to 7391 in March.",
        "Which code opens the office door now?",
    ),
    (
        "health.md",
        "My dentist appointment is on 14 March at 9:30 with Dr Okafor.",
        "When is my next dentist visit?",
    ),
    (
        "allergies.txt",
        "Tomas is allergic to peanuts and carries an epipen.",
        "What food allergy does Tomas have?",
    ),
    (
        "heliotrope.md",
        "Project Heliotrope's deadline moved to the 30th of June.",
        "When is the Heliotrope project due?",
    ),
    (
        "parking.txt",
        "I parked the car on level 3 of the Greenway garage, spot 112.",
        "Where did I leave the car in the garage?",
    ),
    (
        "books.md",
        "Ines lent me her copy of The Glass Orchard; return it by Friday.",
        "Which book do I have to give back to Ines?",
    ),
    (
        "boiler.md",
        "The boiler service company is Hearthwell, phone 555-0142.",
        "Who services the boiler and how do I call them?",
    ),
    (
        "tyres.csv",
        "item,value\nwinter tyre pressure,2.4 bar front and 2.6 bar rear\n",
        "What pressure should the winter tyres have?",
    ),
]


FILLER = [
    "We talked about the weekly planning meeting and who takes notes.",
    "The weather was grey all week, with rain on most afternoons.",
    "Remember to water the tomatoes and check the compost bin.",
    "The quarterly report needs charts for sales and support tickets.",
    "A new cafe opened near the station; the croissants are good.",
    "Sort the photos from the summer holiday into albums.",
    "The bike needs a new chain and the brakes adjusted.",
    "Call grandma on Sunday afternoon to hear about her trip.",
    "Read two chapters of the history book before the club meets.",
    "Clean the gutters before autumn and fix the fence gate.",
    "The team retrospective found the release checklist too long.",
    "Try the lentil soup recipe with smoked paprika and lemon.",
    "Renew the library card and the museum membership.",
    "The printer at work jams when the tray is overfilled.",
    "Plan the route for the hiking weekend in the hills.",
]


def make_corpus(root: Path, n_filler: int = 50, seed: int = 7) -> dict[str, str]:
    """Filler notes with the planted facts hidden in the middle of some; fact file -> query."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n_filler):
        lines = [f"# Notes {i}", "", *rng.sample(FILLER, 6)]
        (root / f"notes-{i:03d}.md").write_text("\n".join(lines) + "\n")
    queries = {}
    for name, fact, question in PLANTED:
        if name.endswith(".csv"):
            body = fact
        else:
            before, after = rng.sample(FILLER, 3), rng.sample(FILLER, 3)
            body = "\n".join([f"# {name.split('.')[0].title()}", "", *before, fact, *after]) + "\n"
        (root / name).write_text(body)
        queries[name] = question
    return queries


def recall_at_k(index: FileIndex, queries: dict[str, str], k: int = 3) -> float:
    found = 0
    for name, question in queries.items():
        hits = index.search(question, k)
        found += any(h.path.endswith("/" + name) for h in hits)
    return found / len(queries)


def open_index(tmp_path: Path, root: Path, embedder: Any, **files: Any) -> FileIndex:
    settings = make_settings(tmp_path, files={"roots": [str(root)], **files})
    return FileIndex(settings, embedder=embedder)
