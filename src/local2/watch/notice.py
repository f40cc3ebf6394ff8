"""The words of a run's notice: a title and a plain-text body saying what changed, the same
in the app's list, the Atom feed, an email or a chat message."""

from __future__ import annotations

from local2.contracts import WhatChanged

MAX_LISTED = 5  # items shown per kind; the run itself has them all
NOTHING_NEW = "nothing new"


def notice_text(question: str, changes: WhatChanged, link: str) -> tuple[str, str]:
    """(title, body) of the notice for a run of the watch on ``question``."""
    topic = " ".join(question.split())
    if len(topic) > 80:
        topic = topic[:79].rstrip() + "…"
    since = changes.get("looked_first_since")
    looked = [f"It looked first at what appeared since {since}."] if since else []
    if changes["nothing_new"]:
        body = " ".join(["Nothing changed since the last run.", *looked])
        return f"{topic}: {NOTHING_NEW}", f"{body}\n\n{link}"
    counts = [
        (len(changes["new_sources"]), "new source", "new sources"),
        (len(changes["new_claims"]), "new claim", "new claims"),
        (len(changes["revised_claims"]), "revised claim", "revised claims"),
        (
            len(changes["no_longer_supported"]),
            "claim no longer supported",
            "claims no longer supported",
        ),
        (len(changes["sources_gone"]), "source gone", "sources gone"),
    ]
    said = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n)
    title = f"{topic}: {'first run' if changes['first_run'] else said}"
    sections = [
        ("New sources", [f"{s['title']} <{s['url']}>" for s in changes["new_sources"]]),
        ("New claims", [c["claim"] for c in changes["new_claims"]]),
        (
            "Revised claims",
            [
                f"{r['after']['claim']} (was: {r['before']['claim']})"
                for r in changes["revised_claims"]
            ],
        ),
        (
            "No longer supported",
            [f"{c['claim']} ({c['reason']})" for c in changes["no_longer_supported"]],
        ),
        ("Sources gone", [f"{s['title']} <{s['url']}>" for s in changes["sources_gone"]]),
    ]
    parts = [_section(name, items) for name, items in sections if items]
    return title, "\n\n".join([*parts, *looked, link])


def _section(name: str, items: list[str]) -> str:
    lines = [f"- {item}" for item in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        lines.append(f"- and {len(items) - MAX_LISTED} more")
    return "\n".join([f"{name}:", *lines])
