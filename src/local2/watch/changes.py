"""What changed between a watch's last run and this one: new sources, sources gone, new and
revised claims, and claims supported last time that no longer are.

Sources are told apart by URL, as the ledger tells them apart (``research.url_key``).
Claims are the sentences of each report that state something
(:func:`local2.research.report_claims`), compared by their content words (the one
tokeniser): the same words, figures included, is the same claim, however it is cited; most
words the same but not all (or another figure) is the claim revised; else it is new. A claim
of last time that this run's verification removed, or whose every source is gone and is not
said again, is no longer supported. When none of this happened the run found nothing new.

A run that looked first at what appeared since the last one (its first round scoped to
``first_round_since``: :mod:`local2.service.watches._runner`) and searched no later round did
not look for what it was not told to: a source of last time that it lacks, dated before that
day or undated, is *not looked at* this time (``not_looked_at``), not gone, and a claim of last
time that only such sources support is not counted as no longer supported. A source dated on
or after that day that this run lacks was looked for, and is gone as in any run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from local2.contracts import (
    ClaimChange,
    ClaimRevised,
    ClaimWithdrawn,
    ResearchPayload,
    ResearchSource,
    SourceChange,
    WhatChanged,
)
from local2.research import report_claims, url_key
from local2.retrieval import numbers, terms

SAME = 0.8  # share of content words two wordings of one claim have in common, at least
REVISED = 0.5  # ... of a claim and its revision (a figure or a name changed)
SOURCES_GONE = "its sources were not found this time"


@dataclass(frozen=True)
class _Claim:
    change: ClaimChange
    words: frozenset[str]
    figures: frozenset[str]


def what_changed(previous: ResearchPayload | None, current: ResearchPayload) -> WhatChanged:
    """``current`` against ``previous`` (None: the watch's first run, all of it new)."""
    now_sources = _sources(current["sources"])
    now_claims = _claims(current)
    since = looked_first_since(current)
    if previous is None:
        found = _changes(True, list(now_sources.values()), [], [c.change for c in now_claims])
        return {**found, "looked_first_since": since, "not_looked_at": []}
    before_sources = _sources(previous["sources"])
    before_claims = _claims(previous)
    new, revised, matched = _match(now_claims, before_claims)
    missing = set(before_sources) - set(now_sources)
    unseen = _not_looked_at(previous, missing, since) if only_first_round(current) else set()
    gone_urls = missing - unseen
    withdrawn = _withdrawn(
        [c for i, c in enumerate(before_claims) if i not in matched],
        _unsupported(current),
        {before_sources[u]["url"] for u in gone_urls},
    )
    found = _changes(
        False,
        [s for u, s in now_sources.items() if u not in before_sources],
        [before_sources[u] for u in before_sources if u in gone_urls],
        new,
        revised,
        withdrawn,
    )
    return {
        **found,
        "looked_first_since": since,
        "not_looked_at": [before_sources[u] for u in before_sources if u in unseen],
    }


def looked_first_since(payload: ResearchPayload) -> str | None:
    """The day the run's first round looked from (ISO), or ``None``: it looked at any date."""
    scope = payload.get("scope")
    return (scope.get("first_round_since") or None) if scope else None


def only_first_round(payload: ResearchPayload) -> bool:
    """Whether every search of the run was one of its first round (scoped to its day)."""
    if looked_first_since(payload) is None:
        return False
    return all((s.get("round") or 1) <= 1 for s in payload["steps"] if s.get("calls"))


def _not_looked_at(previous: ResearchPayload, missing: set[str], since: str | None) -> set[str]:
    """Of last run's sources this run lacks, those it did not search for: dated before
    ``since`` or undated (the engines were asked for what appeared since)."""
    if since is None:
        return set()
    unseen = set()
    for source in previous["sources"]:
        key = url_key(source["url"]) if source.get("url") else ""
        if key in missing and not _dated_on_or_after(source, since):
            unseen.add(key)
    return unseen


def _dated_on_or_after(source: ResearchSource, day: str) -> bool:
    """Whether ``source`` is dated ``day`` (ISO) or later; a year or a month counts to its
    last day (``2024-03`` is on or after ``2024-03-20``)."""
    meta = source.get("meta")
    published = str((meta["published"] if meta else None) or "")[:10]
    if not published[:4].isdigit():
        return False
    last = published + ("-12-31" if len(published) == 4 else "-31" if len(published) == 7 else "")
    return last >= day


def _changes(
    first: bool,
    new_sources: list[SourceChange],
    gone: list[SourceChange],
    new: list[ClaimChange],
    revised: Sequence[ClaimRevised] = (),
    withdrawn: Sequence[ClaimWithdrawn] = (),
) -> WhatChanged:
    nothing = not (new_sources or gone or new or revised or withdrawn)
    return {
        "first_run": first,
        "nothing_new": nothing,
        "new_sources": new_sources,
        "sources_gone": gone,
        "new_claims": new,
        "revised_claims": list(revised),
        "no_longer_supported": list(withdrawn),
    }


def _sources(sources: Sequence[ResearchSource]) -> dict[str, SourceChange]:
    found: dict[str, SourceChange] = {}
    for source in sources:
        if source.get("url"):
            found.setdefault(
                url_key(source["url"]), {"url": source["url"], "title": source["title"]}
            )
    return found


def _claims(payload: ResearchPayload) -> list[_Claim]:
    urls = {s["n"]: s["url"] for s in payload["sources"]}
    out = []
    for stated in report_claims(payload["report"], payload["question"] or ""):
        cited = list(dict.fromkeys(urls[n] for n in stated.cited if n in urls))
        out.append(_claim(stated.text, cited))
    return out


def _claim(text: str, sources: list[str]) -> _Claim:
    return _Claim(
        {"claim": text, "sources": sources}, frozenset(terms(text)), frozenset(numbers(text))
    )


def _similarity(a: _Claim, b: _Claim) -> float:
    union = a.words | b.words
    return len(a.words & b.words) / len(union) if union else 1.0


def _same(a: _Claim, b: _Claim) -> bool:
    return a.figures == b.figures and _similarity(a, b) >= SAME


def _match(
    now: list[_Claim], before: list[_Claim]
) -> tuple[list[ClaimChange], list[ClaimRevised], set[int]]:
    """This run's claims as new or revised ones, and which of last run's each matched."""
    new: list[ClaimChange] = []
    revised: list[ClaimRevised] = []
    matched: set[int] = set()
    for claim in now:
        ranked = sorted(
            ((i, _similarity(claim, b)) for i, b in enumerate(before)), key=lambda p: -p[1]
        )
        same = next((i for i, _ in ranked if _same(claim, before[i])), None)
        if same is not None:
            matched.add(same)
            continue
        near = next((i for i, s in ranked if s >= REVISED and i not in matched), None)
        if near is None:
            new.append(claim.change)
        else:
            matched.add(near)
            revised.append({"before": before[near].change, "after": claim.change})
    return new, revised, matched


def _unsupported(payload: ResearchPayload) -> list[tuple[_Claim, str]]:
    out = []
    for item in payload["unsupported"]:
        for stated in report_claims(item["sentence"], payload["question"] or ""):
            out.append((_claim(stated.text, []), item["reason"]))
    return out


def _withdrawn(
    unmatched: list[_Claim], removed: list[tuple[_Claim, str]], gone: set[str]
) -> list[ClaimWithdrawn]:
    out: list[ClaimWithdrawn] = []
    for claim in unmatched:
        reason = next((why for r, why in removed if _same(claim, r)), None)
        sources = claim.change["sources"]
        if reason is None and sources and set(sources) <= gone:
            reason = SOURCES_GONE
        if reason is not None:
            out.append({"claim": claim.change["claim"], "sources": sources, "reason": reason})
    return out
