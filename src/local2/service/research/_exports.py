"""A run's references as they leave the app: BibTeX, RIS, CSL-JSON or the report itself,
from the payload's ``sources`` (each with its record) through :mod:`local2.references`.

Every surface asks here (``local2 research export``, ``GET /research/{id}/references``, the
app's download buttons, MCP), so the file is the same wherever it is taken from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from local2.contracts import EXPORT_FORMATS, CitedSource, ResearchPayload
from local2.errors import InvalidInput
from local2.references import to_bibtex, to_csl_json, to_ris

# format -> (file extension, media type); the names a person may type for each
ALIASES = {"bib": "bibtex", "csl-json": "csl", "csljson": "csl", "json": "csl", "markdown": "md"}


@dataclass(frozen=True)
class Exported:
    """One export: its text, media type and the file name it is offered under."""

    text: str
    media_type: str
    filename: str
    format: str


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
    """``payload``'s references (or report) in the format ``value`` names."""
    name = export_format(value)
    sources = cited_sources(payload)
    makers: dict[str, Callable[[], str]] = {
        "bibtex": lambda: to_bibtex(sources),
        "ris": lambda: to_ris(sources),
        "csl": lambda: to_csl_json(sources),
        "md": lambda: str(payload.get("report") or ""),
    }
    ext, media = EXPORT_FORMATS[name]
    stem = "report" if name == "md" else "references"
    run_id = payload.get("run_id") or "run"
    return Exported(makers[name](), media, f"{run_id}-{stem}.{ext}", name)
