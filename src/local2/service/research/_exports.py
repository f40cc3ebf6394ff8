"""A run's references as they leave the app: BibTeX, RIS, CSL-JSON or the report itself
(Markdown, HTML, PDF, DOCX, its citations linked to the References), from the payload's
``report`` and ``sources`` (each with its record) through :mod:`local2.references`.

Every surface asks here (``local2 research export``, ``GET /research/{id}/references``, the
app's download buttons, MCP), so the file is the same wherever it is taken from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from local2.contracts import (
    BINARY_FORMATS,
    EXPORT_FORMATS,
    REPORT_FORMATS,
    CitedSource,
    ResearchPayload,
)
from local2.errors import InvalidInput, RunNotReady
from local2.references import to_bibtex, to_csl_json, to_docx, to_html, to_pdf, to_ris

# the other names a person may type for a format
ALIASES = {
    "bib": "bibtex",
    "csl-json": "csl",
    "csljson": "csl",
    "json": "csl",
    "markdown": "md",
    "htm": "html",
    "word": "docx",
}


@dataclass(frozen=True)
class Exported:
    """One export: its bytes, media type and the file name it is offered under."""

    data: bytes
    media_type: str
    filename: str
    format: str

    @property
    def binary(self) -> bool:
        """A PDF or DOCX: a file to write, not text to print."""
        return self.format in BINARY_FORMATS

    @property
    def text(self) -> str:
        """A text format's content (BibTeX, RIS, CSL-JSON, Markdown, HTML)."""
        if self.binary:
            raise TypeError(f"a {self.format} export is not text")
        return self.data.decode("utf-8")


def export_format(value: str) -> str:
    """``bib``, ``BibTeX``, ``csl-json``... as a format name, or refused with the list."""
    name = value.strip().lower()
    name = ALIASES.get(name, name)
    if name not in EXPORT_FORMATS:
        raise InvalidInput(
            f"unknown export format {value!r}: the formats are {', '.join(EXPORT_FORMATS)}",
            f"Choose among: {', '.join(EXPORT_FORMATS)}.",
        )
    return name


def cited_sources(payload: ResearchPayload) -> list[CitedSource]:
    """The report's references as the exports read them."""
    cited: list[CitedSource] = []
    for s in payload.get("sources") or []:
        source = CitedSource(
            n=s["n"],
            title=s["title"],
            url=s["url"],
            kind=s["kind"],
            read_at=s.get("read_at"),
            page=s.get("page"),
        )
        if meta := s.get("meta"):
            source["meta"] = meta
        cited.append(source)
    return cited


def export_run(payload: ResearchPayload, value: str) -> Exported:
    """``payload``'s references (or report) in the format ``value`` names. The report as
    HTML, PDF or DOCX is refused (409) while the run has written none."""
    name = export_format(value)
    sources = cited_sources(payload)
    report = str(payload.get("report") or "")
    run_id = payload.get("run_id") or "run"
    if name in REPORT_FORMATS and name != "md" and not report.strip():
        status = payload.get("status") or "unfinished"
        raise RunNotReady(
            f"Run {run_id} has no report yet (it is {status}): there is nothing to export "
            f"as {name}.",
            "Export it once the run has finished (local2 research list shows where it is).",
        )
    makers: dict[str, Callable[[], str | bytes]] = {
        "bibtex": lambda: to_bibtex(sources),
        "ris": lambda: to_ris(sources),
        "csl": lambda: to_csl_json(sources),
        "md": lambda: report,
        "html": lambda: to_html(report, sources),
        "pdf": lambda: to_pdf(report, sources),
        "docx": lambda: to_docx(report, sources),
    }
    ext, media = EXPORT_FORMATS[name]
    stem = "report" if name in REPORT_FORMATS else "references"
    made = makers[name]()
    data = made.encode("utf-8") if isinstance(made, str) else made
    return Exported(data, media, f"{run_id}-{stem}.{ext}", name)
