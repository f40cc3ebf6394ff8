"""When a watch runs: "every Monday 07:00", a cron expression or an interval, in the person's
time zone.

The text a person writes is parsed here once, into an APScheduler 3 trigger
(:class:`~apscheduler.triggers.cron.CronTrigger` or
:class:`~apscheduler.triggers.interval.IntervalTrigger`); every fire time, daylight saving
included, is that trigger's arithmetic, never ours. An interval counts from the watch's
``anchor`` (when it was added), so its due times stay put across restarts. A cron's day of
the week means what crontab means (0 and 7 are Sunday; APScheduler 3 counts from Monday), so
numbers there are written as day names before APScheduler reads them.

Bad input is an :class:`~local2.errors.InvalidInput` whose ``fix`` shows an example.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from local2.errors import InvalidInput

EXAMPLES = '"every Monday 07:00", "every day at 18:30", "every 6 hours", "30m", "0 7 * * mon-fri"'
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CRON_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab's numbering, 0 first
_UNIT_SIZES = {
    ("s", "sec", "secs", "second", "seconds"): 1,
    ("m", "min", "mins", "minute", "minutes"): 60,
    ("h", "hr", "hrs", "hour", "hours"): 3600,
    ("d", "day", "days"): 86400,
    ("w", "week", "weeks"): 604800,
}
UNITS = {spelling: size for spellings, size in _UNIT_SIZES.items() for spelling in spellings}
_INTERVAL = re.compile(r"^(?:every\s+)?(\d+)\s*([a-z]+)$")
_ONE_UNIT = re.compile(r"^every\s+(second|minute|hour|day|week)$")
_AT = re.compile(r"^every\s+(.+?)\s+(?:at\s+)?(\d{1,2}):(\d{2})$")
_DAY_WORDS = {
    "day": "*",
    "weekday": "mon-fri",
    "weekend": "sat,sun",
    **{name: name[:3] for name in ("monday", "tuesday", "wednesday", "thursday", "friday")},
    **{name: name[:3] for name in ("saturday", "sunday")},
    **{name: name for name in DAYS},
}
GAPS_CHECKED = 64  # fire times a cron's shortest gap is looked for in


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the text as written, its time zone, and the trigger it became."""

    text: str
    timezone: str
    kind: str  # "cron" (the day-and-time phrases too) or "interval"
    trigger: BaseTrigger

    def next_after(self, moment: datetime) -> datetime | None:
        """The first fire time strictly after ``moment`` (None: the schedule has ended)."""
        fire: datetime | None = self.trigger.get_next_fire_time(
            None, moment + timedelta(microseconds=1)
        )
        return fire

    def next_after_ts(self, moment: float) -> float | None:
        """:meth:`next_after` in epoch seconds, as the watch store keeps due times."""
        fire = self.next_after(datetime.fromtimestamp(moment, UTC))
        return None if fire is None else fire.timestamp()

    def fire_times(self, after: datetime, count: int) -> list[datetime]:
        """The next ``count`` fire times after ``after`` (for showing and for checks)."""
        out: list[datetime] = []
        moment = after
        while len(out) < count and (fire := self.next_after(moment)) is not None:
            out.append(fire)
            moment = fire
        return out


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``, or a clear error naming an example."""
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            f"Unknown time zone {name!r}.",
            'Use an IANA name such as "Europe/Berlin", "America/New_York" or "UTC".',
        ) from None


def parse_schedule(
    text: str, timezone: str, *, minimum_s: float = 0, anchor: float | None = None
) -> Schedule:
    """``text`` as a schedule in ``timezone``; intervals count from ``anchor`` (epoch
    seconds; now when None). Refuses a schedule whose runs come closer than ``minimum_s``."""
    tz = zone(timezone)
    cleaned = " ".join(text.strip().lower().split())
    if not cleaned:
        raise InvalidInput("The schedule is empty.", f"Write one such as {EXAMPLES}.")
    start = datetime.fromtimestamp(anchor, UTC) if anchor is not None else datetime.now(UTC)
    seconds = _interval_seconds(cleaned)
    if seconds is not None:
        if seconds <= 0:
            raise InvalidInput(f"The interval {text!r} is zero.", 'Write e.g. "every 6 hours".')
        trigger: BaseTrigger = IntervalTrigger(seconds=seconds, start_date=start, timezone=tz)
        schedule = Schedule(text.strip(), tz.key, "interval", trigger)
        _check_minimum(schedule, seconds, minimum_s)
        return schedule
    trigger = _phrase_trigger(cleaned, tz) or _cron_trigger(cleaned, tz, text)
    schedule = Schedule(text.strip(), tz.key, "cron", trigger)
    _check_minimum(schedule, _shortest_gap(schedule, start), minimum_s)
    return schedule


def _interval_seconds(cleaned: str) -> int | None:
    """Seconds of "every 6 hours", "30m", "every hour"; None if it is not an interval."""
    single = _ONE_UNIT.match(cleaned)
    if single:
        return UNITS[single.group(1)]
    match = _INTERVAL.match(cleaned)
    if not match:
        return None
    unit = match.group(2)
    if unit not in UNITS:
        raise InvalidInput(
            f"Unknown unit {unit!r} in the interval {cleaned!r}.",
            'Use s, m, h, d or w (or the words): "every 6 hours", "30m", "every 2 days".',
        )
    return int(match.group(1)) * UNITS[unit]


def _phrase_trigger(cleaned: str, tz: ZoneInfo) -> CronTrigger | None:
    """ "every Monday 07:00", "every day at 18:30", "every mon, thu 9:15"; None if not one."""
    match = _AT.match(cleaned)
    if not match:
        return None
    words = [w for w in re.split(r"[,\s]+|\band\b", match.group(1)) if w]
    days = [_DAY_WORDS.get(w) for w in words]
    if not days or None in days:
        unknown = next(w for w, d in zip(words, days, strict=True) if d is None)
        raise InvalidInput(
            f"Unknown day {unknown!r} in {cleaned!r}.",
            'Write e.g. "every Monday 07:00", "every weekday at 08:00", "every day at 18:30".',
        )
    hour, minute = int(match.group(2)), int(match.group(3))
    if hour > 23 or minute > 59:
        raise InvalidInput(f"No such time of day in {cleaned!r}.", 'Write e.g. "07:00" or "18:30".')
    return CronTrigger(
        day_of_week=",".join(d for d in days if d), hour=hour, minute=minute, timezone=tz
    )


def _cron_trigger(cleaned: str, tz: ZoneInfo, text: str) -> CronTrigger:
    fields = cleaned.split()
    if len(fields) != 5:
        raise InvalidInput(
            f"{text!r} is not a schedule LoCAL2 reads.",
            f"Write one such as {EXAMPLES} (a cron expression has five fields: minute, hour,"
            " day of month, month, day of week).",
        )
    fields[4] = _cron_days(fields[4], text)
    try:
        return CronTrigger.from_crontab(" ".join(fields), timezone=tz)
    except ValueError as exc:
        raise InvalidInput(
            f"The cron expression {text!r} is malformed: {exc}.",
            'Five fields: minute hour day-of-month month day-of-week, e.g. "0 7 * * mon-fri"'
            ' (07:00 on weekdays) or "30 18 1 * *" (18:30 on the 1st).',
        ) from None


def _cron_days(field: str, text: str) -> str:
    """A crontab day-of-week field with its numbers (0 or 7 Sunday) as day names."""
    if not re.search(r"\d", field):
        return field
    days: set[int] = set()
    for part in field.split(","):
        match = re.fullmatch(r"(\*|\d)(?:-(\d))?(?:/(\d+))?", part)
        if not match:
            raise InvalidInput(
                f"The day of the week {field!r} in {text!r} is malformed.",
                'Use 0-7 (0 and 7 are Sunday) or names: "1-5", "mon-fri", "sat,sun".',
            )
        first, last, step = match.groups()
        low, high = (0, 6) if first == "*" else (int(first), int(last or first))
        if high > 7 or low > high:
            raise InvalidInput(
                f"The day of the week {field!r} in {text!r} is out of range.",
                'Use 0-7 (0 and 7 are Sunday) or names: "1-5", "mon-fri", "sat,sun".',
            )
        days.update(d % 7 for d in range(low, high + 1, int(step or 1)))
    return ",".join(CRON_DAYS[d] for d in sorted(days))


def _shortest_gap(schedule: Schedule, start: datetime) -> float:
    times = schedule.fire_times(start, GAPS_CHECKED)
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    return min(gaps, default=float("inf"))


def _check_minimum(schedule: Schedule, gap_s: float, minimum_s: float) -> None:
    if gap_s < minimum_s:
        raise InvalidInput(
            f"{schedule.text!r} runs every {_spoken(gap_s)}; watches run at most every"
            f" {_spoken(minimum_s)} here.",
            f'Choose a longer interval, e.g. "every {_spoken(max(minimum_s, 3600))}"'
            " (the limit is the setting watch.minimum_interval_s).",
        )


def _spoken(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:g} seconds"
