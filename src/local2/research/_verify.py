"""Holding a report to its sources: which sentences state something (claims), ``verify``,
which keeps only what the sources support and builds the references from the ledger, and
the claims a finished report makes, read back from its Markdown.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from local2.contracts import ResearchSource, SourceMeta, UnsupportedSentence
from local2.models import REPETITION_NOTE
from local2.research._state import Source, find
from local2.retrieval import (
    FRAME_WORDS,
    as_written,
    check_support,
    names,
    numbers,
    sentences,
    terms,
    unstated_names,
    unstated_numbers,
)

# --- claims -----------------------------------------------------------------------------
# Which sentences of a report state something, and so must cite a source that supports them.
#
# Every sentence is a claim except, by what its text says:
#
# - a heading (a Markdown heading, a line all in bold, a short label ending in ":", a short
#   line written as a title);
# - the question asked back, or restated: a sentence ending in "?", or one whose words are the
#   question's own beside words of asking ("This report asks why ...", "The question is
#   whether ...");
# - a sentence that only says what was or was not found: made of nothing but words about the
#   report, the sources and the search ("Here is what the sources say.", "No sources could
#   be gathered, so there is nothing to report."), or in the words of a finding that is not
#   there ("The sources do not say how much it cost.", "I could not find when it opened."),
#   with no "but" or "although" after which a claim could follow;
# - a pointer to a source ("See the survey [2] for details.");
# - the embedded model's note that it stopped repeating itself.
#
# Such a sentence still must not bring a name or a number of its own (verify checks that).

HEADING = "a heading"
QUESTION = "the question"
ABOUT_SOURCES = "says what was or was not found"
WRITER_NOTE = "the model's own note"
POINTER = "points to a source"

# Words about the report, its sources and the search rather than about the world.
REPORT_WORDS = FRAME_WORDS | frozenset(
    terms(
        """
        above answer answered answers anything attempt attempted available below cannot
        clear clearly data detail details directly enough explicitly find finding findings
        follow following follows gather gathered gave give gives here list listed lists
        none nothing numbered page pages provide provided provides question questions read
        relevant search searched searches searching specific sufficient tried try unable
        unfortunately write written
        """
    )
)
# Words of asking: beside the question's own words they restate it rather than answer it.
ASKING_WORDS = frozenset(
    terms(
        """
        address addresses ask asked asks concern concerns consider considers examine
        examines explore explores investigate investigates look looks question questions
        topic
        """
    )
)
_WH = re.compile(r"\b(?:why|how|what|which|who|whom|whose|when|where|whether|if)\b", re.I)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|yet|whereas|while)\b|;", re.I)

_NOUNS = r"(?:sources?|search(?:es)?(?:\s+results?)?|pages?|documents?|texts?|articles?)"
_SOURCES = rf"(?:the|these|those|my|our|its|any\s+of\s+the)\s+(?:\w+\s+)?{_NOUNS}"
_SAY = (
    r"(?:say|says|said|mention\w*|state[sd]?|give[sn]?|gave|provide[sd]?|contain\w*|"
    r"answer\w*|include[sd]?|cover\w*|discuss\w*|address\w*|describe[sd]?|specif\w+|"
    r"report\w*|explain\w*|tell|tells|told|list\w*|name[sd]?|identif\w+|show\w*|offer\w*|"
    r"confirm\w*|indicate[sd]?|support\w*)"
)
# A finding that is not there: "No source says", "No sources could be gathered", "The
# sources do not mention", "I could not find", "is not mentioned in the sources", "There is
# no information in the pages". A source noun alone is not enough ("He had no source of
# income", "No documents of the period survive" state something).
NOT_FOUND = re.compile(
    "|".join(
        [
            rf"\b(?:no|none\s+of\s+the|neither\s+of\s+the|not\s+one\s+of\s+the)\s+"
            rf"(?:\w+\s+)?{_NOUNS}\s+(?:\w+\s+){{0,2}}?{_SAY}\b",
            rf"\bno\s+(?:\w+\s+)?{_NOUNS}\s+(?:could|can|were|was)\s+(?:be\s+)?"
            r"(?:found|gathered|read|retrieved|fetched|reached)\b",
            rf"\b{_SOURCES}\s+(?:do|does|did|could|can|would)\s*(?:not|n't)\s+(?:\w+\s+)?{_SAY}\b",
            r"\b(?:i|we)\s+(?:could|can|did|was|were)\s*(?:not|n't)\s+(?:\w+\s+)?"
            r"(?:find|found|locate|identify|determine|confirm|see|gather|answer)\b",
            r"\b(?:i|we)\s+found\s+no(?:thing)?\b",
            rf"\bnot\s+(?:\w+\s+){{0,2}}?{_SAY}\s+(?:in|by)\s+{_SOURCES}\b",
            r"\b(?:nothing|no\s+(?:information|mention|details?|data|evidence|answer))\s+"
            rf"(?:\w+\s+){{0,3}}?(?:in|from|among)\s+{_SOURCES}\b",
        ]
    ),
    re.I,
)
_POINTER = re.compile(r"^(?:for\s+(?:more|details|further)\b[^,]*,\s*)?see\b", re.I)
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)[^*_\n]+\1\s*:?\s*$")
LABEL_WORDS = 6  # a line this short ending in ":" is a label ("Key findings:")


# Words a title leaves in lower case ("Senate of New York State").
_SMALL_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "at",
        "de",
        "der",
        "di",
        "du",
        "for",
        "from",
        "in",
        "la",
        "le",
        "of",
        "on",
        "or",
        "the",
        "to",
        "van",
        "von",
    }
)


def _title_like(line: str) -> bool:
    """A short line written as a title: no sentence's end, every word but the small ones
    capitalised ("Introduction", "Senate of New York State", "Bharatpur, Rajasthan")."""
    found = line.split()
    if not found or len(found) > LABEL_WORDS or line.endswith((".", "!", "?", ";", ",")):
        return False
    return all(w[0].isupper() or w.lower() in _SMALL_WORDS for w in found if w[0].isalpha())


def is_heading(line: str) -> bool:
    """A Markdown heading, a line all in bold, a short label that ends in ":", or a short
    line written as a title."""
    stripped = line.strip()
    if re.match(r"#{1,6}\s", stripped) or _BOLD_LINE.match(stripped):
        return True
    if stripped.endswith(":") and len(stripped.split()) <= LABEL_WORDS:
        return True
    return _title_like(stripped)


def not_a_claim(sentence: str, question: str, *, heading: bool = False) -> str | None:
    """Why ``sentence`` (citation marks taken out) states nothing, or None if it does."""
    text = sentence.strip()
    if heading or is_heading(text):
        return HEADING
    if text == REPETITION_NOTE.strip():
        return WRITER_NOTE
    if text.rstrip("*_ )\"'”’").endswith("?"):
        return QUESTION
    if _POINTER.match(text):
        return POINTER
    said = [t for t in terms(text) if t not in REPORT_WORDS]
    if not said:
        return ABOUT_SOURCES
    asking = [t for t in said if t in ASKING_WORDS]
    if set(said) - set(asking) <= set(terms(question)) and (asking or _WH.search(text)):
        return QUESTION
    if NOT_FOUND.search(text) and not _CONTRAST.search(text):
        return ABOUT_SOURCES
    return None


# --- verify -----------------------------------------------------------------------------
# ``verify``: keep only what the sources support, and build the references from the ledger.
#
# Every sentence of the draft is checked. A sentence that states something (:mod:`claims`:
# all but headings, the question restated and what was or was not found) must cite ``[n]``,
# its numbers must be in the ledger, and what it says must be in the sources it cites: its
# numbers and proper names in their text, its content words in a passage of each
# (:func:`local2.retrieval.support`, the one check the critic's grounding shares). An uncited
# claim is unsupported, whatever it states, unless its paragraph cites further on ("A. B
# [2]." cites [2] for both, as people write): then it is held to that citation, and goes if
# that sentence goes. A sentence that states nothing may stay uncited if it brings no name or
# number that neither the sources nor the question have. What fails
# is removed from the report and listed, with the reason, as unsupported. URLs the model
# typed never survive as links: a URL that is a ledger source becomes its citation, any other
# is dropped. The model's own reference list is discarded; the one appended is built from the
# ledger (title, URL, when read).

CITATION = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\((\S+?)(?:\s+\"[^\"\n]*\")?\)")
_URL = re.compile(r"<?\bhttps?://[^\s<>\"'`)\]]+>?", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,200}>")
_OWN_REFERENCES = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*)?(?:references|sources|bibliography|works cited)\b", re.I
)
_LIST_MARK = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+|\s*>\s*|\s*#{1,6}\s+)")
_TRAILING_MARKS = re.compile(r"^((?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])+)(.*)$", re.S)
UNCITED = "states something but cites no source"


@dataclass
class Unsupported:
    sentence: str
    reason: str
    citations: list[int] = field(default_factory=list)

    def as_dict(self) -> UnsupportedSentence:
        return {"sentence": self.sentence, "reason": self.reason, "citations": self.citations}


@dataclass
class Verified:
    body: str  # the report without references
    unsupported: list[Unsupported]
    cited: list[int]  # ledger numbers cited by sentences that survived, in order
    citations: int  # citation marks that survived
    removed_links: list[str]

    def references(self, ledger: Sequence[Source]) -> list[Source]:
        """Sources read (pages) plus any result the surviving text cites, by number."""
        cited = set(self.cited)
        return [s for s in ledger if s["kind"] == "page" or s["n"] in cited]


def cited_numbers(text: str) -> list[int]:
    return [int(n) for m in CITATION.finditer(text) for n in re.split(r"[,;]", m.group(1))]


def numbers_in(text: str) -> set[str]:
    return set(numbers(text))


def _stated(sentence: str) -> str:
    """The sentence without its list mark and citation marks: what it says."""
    return CITATION.sub(" ", _LIST_MARK.sub("", sentence, count=1))


def claims(sentence: str) -> tuple[list[str], list[str]]:
    """The numbers and proper names a sentence states (citation marks and list marks aside).

    The first word is not taken for a name: any sentence starts with a capital.
    """
    text = _stated(sentence)
    return list(dict.fromkeys(numbers(text))), names(text)


def missing_claims(sentence: str, evidence: str) -> list[str]:
    """The numbers and names ``sentence`` states that ``evidence`` does not contain."""
    text = _stated(sentence)
    return [*unstated_numbers(text, evidence), *unstated_names(text, evidence)]


def _evidence(source: Source) -> str:
    return f"{source['title']}\n{source['text']}"


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph; citation marks after a full stop stay with its sentence."""
    pieces = sentences(text, capital=True)
    out: list[str] = []
    for piece in pieces:
        marks = _TRAILING_MARKS.match(piece)
        if marks and out:
            out[-1] = f"{out[-1]} {marks.group(1).strip()}"
            piece = marks.group(2).strip()
            if not piece:
                continue
        out.append(piece)
    return out


REMOVED_LINK = "‹link removed›"


def _clean_links(text: str, ledger: Sequence[Source], removed: list[str]) -> str:
    """Images become their alt text, HTML tags go, and every URL the model wrote becomes the
    citation of its ledger source, or :data:`REMOVED_LINK` (which fails its sentence)."""
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _TAG.sub("", text)

    def link(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2).strip("<>")
        source = find(ledger, url)
        if source is not None:
            return f"{label} [{source['n']}]"
        removed.append(url)
        return f"{label} {REMOVED_LINK}"

    def bare(match: re.Match[str]) -> str:
        url = match.group(0).strip("<>").rstrip(".,;:!?")
        tail = match.group(0).strip("<>")[len(url) :]
        source = find(ledger, url)
        if source is not None:
            return f"[{source['n']}]{tail}"
        removed.append(url)
        return f"{REMOVED_LINK}{tail}"

    return _URL.sub(bare, _LINK.sub(link, text))


def _drop_own_references(text: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if i > 0 and _OWN_REFERENCES.match(line) and len(line.strip()) < 40:
            return "\n".join(lines[:i])
    return text


def _listed(items: list[str]) -> str:
    return ", ".join(repr(m) for m in items[:4])


def check_sentence(
    sentence: str,
    ledger: Sequence[Source],
    question: str,
    *,
    heading: bool = False,
    lent: Sequence[int] = (),
) -> Unsupported | None:
    """Why ``sentence`` cannot stay in the report, or None (``heading``: its line is one;
    ``lent``: the citations of the next sentence of its paragraph that has some, which a
    sentence without its own is held to, as a paragraph that ends "... [2]." cites [2]
    for all it said since the last citation)."""
    numbers = cited_numbers(sentence)
    if REMOVED_LINK in sentence:
        return Unsupported(sentence, "links to a page that no source found or read has", numbers)
    by_n = {s["n"]: s for s in ledger}
    unknown = [n for n in numbers if n not in by_n]
    if unknown:
        listed = ", ".join(f"[{n}]" for n in unknown)
        return Unsupported(sentence, f"cites {listed}, which no source found or read has", numbers)
    cited = ", ".join(f"[{n}]" for n in dict.fromkeys(numbers))
    sources = [_evidence(by_n[n]) for n in dict.fromkeys(numbers)]
    text = _stated(sentence)
    if not_a_claim(text, question, heading=heading) is not None:
        # States nothing; still, a name or number of its own must come from somewhere.
        evidence = "\n".join(sources or [question, *(_evidence(s) for s in ledger)])
        missing = missing_claims(sentence, evidence)
        if not missing:
            return None
        if numbers:
            return Unsupported(
                sentence, f"{_listed(missing)} not in the cited source {cited}", numbers
            )
        return Unsupported(sentence, f"cites no source, and {_listed(missing)} is in none", [])
    held = list(dict.fromkeys(numbers or [n for n in lent if n in by_n]))
    if not held:
        return Unsupported(sentence, UNCITED, [])
    found = check_support(text, [_evidence(by_n[n]) for n in held])
    source = ", ".join(f"[{n}]" for n in held)
    source = f"the cited source {source}" if numbers else f"its paragraph's next citation {source}"
    prefix = "" if numbers else "cites no source, and "
    missing = [*found.numbers, *found.names]
    if missing:
        return Unsupported(sentence, f"{prefix}{_listed(missing)} not in {source}", numbers)
    if found.words_short:
        words = _listed(as_written(text, found.words))
        return Unsupported(
            sentence,
            f"{prefix}{source} does not say this: {words} not in its passage that matches best",
            numbers,
        )
    return None


def _is_claim(sentence: str, question: str, heading: bool) -> bool:
    return not_a_claim(_stated(sentence), question, heading=heading) is None


_OWN_LINE = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}[.)]\s|>|#{1,6}\s|\||```)")


def lines_of(text: str) -> list[str]:
    """The draft's lines, a paragraph's wrapped lines joined into one (Markdown reads them as
    one; a sentence wrapped across two would lose its citation), with list items, headings,
    quotes and table rows each a line of its own, and blank lines kept."""
    out: list[str] = []
    for line in text.splitlines():
        follows = bool(out) and out[-1].strip() and not is_heading(out[-1])
        joins = follows and line.strip() and not _OWN_LINE.match(line) and not is_heading(line)
        if joins and not out[-1].lstrip().startswith(("|", "```")):
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
            continue
        out.append(line)
    return out


def verify(draft: str, ledger: Sequence[Source], question: str = "") -> Verified:
    """Check every sentence of ``draft`` against ``ledger`` (see the module docstring)."""
    removed_links: list[str] = []
    text = _clean_links(_drop_own_references(draft.strip()), ledger, removed_links)
    unsupported: list[Unsupported] = []
    kept_lines: list[str] = []
    cited: list[int] = []
    for line in lines_of(text):
        if not line.strip():
            kept_lines.append("")
            continue
        mark = _LIST_MARK.match(line)
        prefix = mark.group(1) if mark else ""
        body = line[len(prefix) :]
        heading = prefix.lstrip().startswith("#") or is_heading(body)
        kept = []
        pieces = split_sentences(body)
        marks = [cited_numbers(p) for p in pieces]
        lenders = [
            next((j for j in range(i + 1, len(pieces)) if marks[j]), -1) for i in range(len(pieces))
        ]
        problems = [
            check_sentence(p, ledger, question, heading=heading, lent=marks[j] if j >= 0 else [])
            for p, j in zip(pieces, lenders, strict=True)
        ]
        for i, sentence in enumerate(pieces):
            problem = problems[i]
            j = lenders[i]
            leant = problem is None and not marks[i] and j >= 0
            if leant and problems[j] is not None and _is_claim(sentence, question, heading):
                problem = Unsupported(sentence, UNCITED, [])  # the citation it leant on went
            if problem is None:
                kept.append(sentence)
                cited.extend(marks[i])
            else:
                unsupported.append(problem)
        if kept:
            kept_lines.append(prefix + " ".join(kept))
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(kept_lines)).strip()
    return Verified(
        body=body,
        unsupported=unsupported,
        cited=list(dict.fromkeys(cited)),
        citations=len(cited),
        removed_links=removed_links,
    )


def _when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else ""


def safe_url(url: str) -> str | None:
    """An http(s) URL fit for a Markdown link target (anything else is never linked)."""
    if not re.match(r"https?://", url, re.IGNORECASE):
        return None
    return re.sub(r"[\s()<>\[\]]", lambda m: f"%{ord(m.group(0)):02X}", url)


def plain(text: str) -> str:
    """Untrusted text (a page title) shown in Markdown as text: no links, images or HTML."""
    return re.sub(r"([\\`*_\[\]()<>!#|{}])", r"\\\1", " ".join(text.split()))


def why_found(source: Mapping[str, Any]) -> str:
    """Why a source was read, in words: ``rank 3 in s1 "query", score 0.82`` (a ledger entry's
    ``why``, or a payload source's own fields); empty for one no search found."""
    why = source.get("why") or source
    rank, query = why.get("rank"), why.get("query")
    if rank is None or not query:
        return ""
    score = float(why.get("score") or 0)
    return f'rank {rank} in {why.get("found_by")} "{query}", score {score:.2f}'


KEPT_COPY = "kept copy"  # a reference read from the library names its entry after this


RETRACTED = "RETRACTED"  # how a retracted work is marked, wherever it is cited
UNDATED = "undated"


def record_line(meta: SourceMeta | None) -> str:
    """What a reference says of its work: authors, date (or "undated"), venue, ids; a
    retracted work marked first."""
    if not meta:
        return UNDATED
    authors = list(meta.get("authors") or [])
    who = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    parts = [
        f"{who} ({meta.get('published') or UNDATED})" if who else meta.get("published") or UNDATED
    ]
    if meta.get("venue"):
        parts.append(str(meta["venue"]))
    ids = [
        f"doi:{meta['doi']}" if meta.get("doi") else "",
        f"arXiv:{meta['arxiv_id']}" if meta.get("arxiv_id") else "",
        f"PMID {meta['pmid']}" if meta.get("pmid") else "",
    ]
    parts += [i for i in ids if i]
    line = plain(". ".join(parts))
    return f"**{RETRACTED}** — {line}" if meta.get("retracted") else line


def retracted(references: Iterable[Source]) -> list[int]:
    """The numbers of the references whose work is retracted."""
    return [s["n"] for s in references if (meta := s.get("meta")) and meta["retracted"]]


def mark_retracted(body: str, numbers: Sequence[int]) -> str:
    """Each citation of a retracted work followed by the mark, where it is cited."""
    if not numbers:
        return body
    wanted = "|".join(str(n) for n in numbers)
    return re.sub(rf"\[({wanted})\](?! _\({RETRACTED})", rf"[\1] _({RETRACTED})_", body)


def references_markdown(references: Iterable[Source]) -> str:
    lines = []
    for s in references:
        meta = s.get("meta")
        scholarly = meta is not None and meta.get("kind") in ("paper", "preprint")
        unread = "abstract only (not read)" if scholarly else "search result"
        how = f"read {_when(s['read_at'])}" if s["kind"] == "page" else unread
        found = why_found(s)
        how += f" ({plain(found)})" if found else ""
        url = safe_url(s["url"])
        title = plain(s["title"])
        target = f"[{title}]({url})" if url else f"{title} ({plain(s['url'])})"
        kept = s.get("kept")
        copy = f" — {KEPT_COPY} `{kept}`" if kept else ""  # read from the library
        lines.append(f"[{s['n']}] {target} — {record_line(meta)} — {how}{copy}")
    return "\n\n".join(lines)


def report_markdown(
    question: str,
    verified: Verified,
    references: Sequence[Source],
    why_empty: str = "",
    scope: str = "",
) -> str:
    """The report as a Markdown document: question, the run's scope (``scope``: its
    sentence), a warning for each retracted work cited, verified text, references from the
    ledger; ``why_empty`` says why there were no sources to report from."""
    parts = [f"# {question.strip()}"]
    if scope:
        undated = sum(1 for s in references if not ((m := s.get("meta")) and m["published"]))
        kept = (
            f" {undated} of the sources are undated, kept: nothing dates them outside it."
            if undated and "published" in scope
            else ""
        )
        parts.append(f"_Scope: {plain(scope)}{kept}_")
    for n in retracted(references):
        parts.append(
            f"> **Warning:** source [{n}] is {RETRACTED}: what it says is not to be relied on."
        )
    if why_empty:
        parts.append(f"_{plain(why_empty)}_")
    if verified.body or not why_empty:
        body = mark_retracted(verified.body, retracted(references))
        parts.append(body or "_No statement survived verification._")
    if references:
        parts += ["## References", references_markdown(references)]
    if verified.unsupported:
        listed = "\n".join(f"- ~~{u.sentence}~~ ({u.reason})" for u in verified.unsupported)
        parts += ["## Removed as unsupported", listed]
    return "\n\n".join(parts) + "\n"


def link_citations(report: str, sources: Sequence[ResearchSource]) -> str:
    """``[n]`` made clickable (to the source's URL from the ledger), for the app."""
    urls = {int(s["n"]): url for s in sources if (url := safe_url(str(s["url"])))}

    def link(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"[,;]", match.group(1))]
        if not all(n in urls for n in numbers):
            return match.group(0)
        return "".join(f"[\\[{n}\\]]({urls[n]})" for n in numbers)

    # Only citation marks: a reference line "[n] [title](url)" is left as it is.
    return re.sub(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\](?!\s*\[)", link, report)


# --- stated_claims ----------------------------------------------------------------------
# The claims a finished report makes, read back from its Markdown: each sentence that states
# something (:func:`not_a_claim` above), without its citation marks, with the sources it cites.
#
# A watch compares two runs' reports by these (``local2.watch.changes``). The report is the
# verified text under the question's heading; its "References" and "Removed as unsupported"
# sections are the run's own lists, not claims.

# The sections report_markdown adds after the verified text.
_OWN_SECTIONS = re.compile(r"^#{1,6}\s+(?:references|removed as unsupported)\s*$", re.I)
_MARKS = re.compile(rf"\s*{CITATION.pattern}")  # a citation mark, with the space before it
_ITEM = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)]|#{1,6})\s+")
# What report_markdown itself writes around the body: the scope's line and why there were no
# sources (a line in _italics_), and a retracted source's warning: none of them a claim.
_OWN_NOTE = re.compile(r"^(?:_.*_|> \*\*Warning:\*\* .*)$")


@dataclass(frozen=True)
class StatedClaim:
    """One claim of a report: what it says (marks out, spaces folded) and what it cites."""

    text: str
    cited: tuple[int, ...]


def report_claims(report: str, question: str) -> list[StatedClaim]:
    """The claims of ``report``, in order, each once."""
    found: dict[str, StatedClaim] = {}
    for line in lines_of(_verified_text(report)):
        if not line.strip() or _OWN_NOTE.match(line.strip()):
            continue
        body = _ITEM.sub("", line, count=1)
        heading = line.lstrip().startswith("#") or is_heading(body)
        for sentence in split_sentences(body):
            text = " ".join(_MARKS.sub("", sentence).split())
            if text and not_a_claim(text, question, heading=heading) is None:
                found.setdefault(text, StatedClaim(text, tuple(cited_numbers(sentence))))
    return list(found.values())


def _verified_text(report: str) -> str:
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if _OWN_SECTIONS.match(line.strip()):
            return "\n".join(lines[:i])
    return report
