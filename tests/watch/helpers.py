"""What the watch tests share: the pages a watch reads before and after a change, and its
question."""

from __future__ import annotations

import dataclasses
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from local2.contracts import LOCAL
from local2.service import WatchDesk
from local2_testkit.research_web import Page

QUESTION = "What is the state of the Kestrel solar plant?"


def page(name: str, title: str, *sentences: str) -> Page:
    body = "".join(f"<p>{s}</p>" for s in sentences)
    html = (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}</article></body></html>"
    )
    return Page(name, title, html, " ".join(sentences))


PLANT = page(
    "kestrel-plant",
    "Kestrel solar plant output",
    "The Kestrel solar plant produces 40 MW of power for the region.",
    "Engineers at the Kestrel solar plant check its panels every week.",
)


PLANT_AFTER = page(
    "kestrel-plant",
    "Kestrel solar plant output",
    "The Kestrel solar plant produces 55 MW of power for the region.",
    "Engineers at the Kestrel solar plant check its panels every week.",
)


GRID = page(
    "kestrel-grid",
    "Kestrel solar plant grid link",
    "The Kestrel solar plant feeds the Northern grid through two power lines.",
    "The grid operator of the Kestrel solar plant publishes its load each month.",
)


BATTERY = page(
    "kestrel-battery",
    "Kestrel solar plant batteries",
    "The Kestrel solar plant added a battery bank of 12 MWh in March.",
    "The batteries of the Kestrel solar plant store power for the evening.",
)


def dated(page: Page, day: date) -> Page:
    return dataclasses.replace(page, published=day)


OLD = date.today() - timedelta(days=90)  # long before any run of these tests


def since_of(desk: WatchDesk, watch_id: str) -> str:
    """The day the watch's latest finished run started, in its time zone (Europe/Berlin)."""
    [run] = [r for r in desk.show(LOCAL, watch_id)["runs"] if r["status"] == "done"][:1]
    return datetime.fromtimestamp(run["started_at"], ZoneInfo("Europe/Berlin")).date().isoformat()
