"""Schedules: the phrases, cron lines and intervals a person writes, read into APScheduler 3's
triggers in their time zone; daylight saving by the trigger's arithmetic; clear errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from local2.errors import InvalidInput
from local2.watch import parse_schedule

BERLIN = ZoneInfo("Europe/Berlin")


def test_a_weekly_berlin_watch_fires_at_seven_local_on_both_sides_of_the_october_change() -> None:
    schedule = parse_schedule("every Monday 07:00", "Europe/Berlin")
    # 2026's change is on Sunday 25 October (03:00 CEST -> 02:00 CET).
    before, after = schedule.fire_times(datetime(2026, 10, 14, tzinfo=UTC), 2)
    assert before == datetime(2026, 10, 19, 7, 0, tzinfo=BERLIN)
    assert after == datetime(2026, 10, 26, 7, 0, tzinfo=BERLIN)
    assert (before.astimezone(BERLIN).hour, after.astimezone(BERLIN).hour) == (7, 7)
    assert before.utcoffset() == timedelta(hours=2) and after.utcoffset() == timedelta(hours=1)
    # one week and one hour apart in real time
    assert after.timestamp() - before.timestamp() == 7 * 86400 + 3600


def test_the_spring_change_too_and_a_cron_line_alike() -> None:
    phrase = parse_schedule("every sunday at 7:00", "Europe/Berlin")
    cron = parse_schedule("0 7 * * 0", "Europe/Berlin")  # crontab: 0 is Sunday
    start = datetime(2026, 3, 20, tzinfo=UTC)  # the change: Sunday 29 March 2026
    assert phrase.fire_times(start, 3) == cron.fire_times(start, 3)
    fires = cron.fire_times(start, 3)
    assert [f.astimezone(BERLIN).strftime("%a %H:%M") for f in fires] == ["Sun 07:00"] * 3
    assert [f.utcoffset() for f in fires] == [timedelta(hours=1), *[timedelta(hours=2)] * 2]


@pytest.mark.parametrize(
    ("cron", "days"),
    [
        ("0 9 * * 1-5", ["Mon", "Tue", "Wed", "Thu", "Fri"]),
        ("0 9 * * 7", ["Sun"]),
        ("0 9 * * 6,0", ["Sun", "Sat"]),
        ("0 9 * * */3", ["Sun", "Wed", "Sat"]),
        ("0 9 * * mon-fri", ["Mon", "Tue", "Wed", "Thu", "Fri"]),
    ],
)
def test_a_cron_lines_weekdays_mean_what_crontab_means(cron: str, days: list[str]) -> None:
    fires = parse_schedule(cron, "UTC").fire_times(datetime(2026, 6, 7, tzinfo=UTC), 7)
    assert sorted({f.strftime("%a") for f in fires}) == sorted(days)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("every 6 hours", 21600), ("30m", 1800), ("every hour", 3600), ("2d", 172800), ("45 s", 45)],
)
def test_intervals_count_from_the_anchor(text: str, seconds: int) -> None:
    anchor = datetime(2026, 1, 1, 12, 0, tzinfo=UTC).timestamp()
    schedule = parse_schedule(text, "Europe/Berlin", anchor=anchor)
    assert schedule.kind == "interval"
    first = schedule.next_after_ts(anchor)
    assert first == anchor + seconds
    # strictly after: a moment that is itself a fire time gives the next one
    assert schedule.next_after_ts(first) == anchor + 2 * seconds  # type: ignore[arg-type]
    later = anchor + 10 * seconds + 1
    assert schedule.next_after_ts(later) == anchor + 11 * seconds


def test_the_same_due_times_after_a_restart() -> None:
    """The schedule is read again from its text and anchor: the due times do not move."""
    anchor = 1_780_000_000.0
    one = parse_schedule("every 6 hours", "UTC", anchor=anchor)
    two = parse_schedule("every 6 hours", "UTC", anchor=anchor)
    moment = anchor + 5 * 86400 + 123.4  # twenty intervals and a bit
    assert one.next_after_ts(moment) == two.next_after_ts(moment) == anchor + 21 * 21600


@pytest.mark.parametrize(
    ("text", "zone", "said", "example"),
    [
        ("61 * * * *", "UTC", "malformed", "0 7 * * mon-fri"),
        ("* * *", "UTC", "is not a schedule", "five fields"),
        ("every 5 fortnights", "UTC", "Unknown unit", "every 6 hours"),
        ("every funday 07:00", "UTC", "Unknown day", "every Monday 07:00"),
        ("every monday 25:00", "UTC", "No such time", "07:00"),
        ("0 7 * * 8", "UTC", "out of range", "mon-fri"),
        ("every monday 07:00", "Mars/Olympus", "Unknown time zone", "Europe/Berlin"),
        ("", "UTC", "empty", "every Monday 07:00"),
        ("0m", "UTC", "zero", "every 6 hours"),
    ],
)
def test_bad_input_says_what_is_wrong_with_an_example(
    text: str, zone: str, said: str, example: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_schedule(text, zone)
    assert said in caught.value.message
    assert example in caught.value.fix


def test_a_schedule_under_the_minimum_interval_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_schedule("every 5 minutes", "UTC", minimum_s=900)
    assert "every 5 minutes" in caught.value.message and "15 minutes" in caught.value.message
    assert "watch.minimum_interval" in caught.value.fix
    with pytest.raises(InvalidInput):  # a cron line's runs are measured too
        parse_schedule("*/5 * * * *", "UTC", minimum_s=900)
    assert parse_schedule("*/15 * * * *", "UTC", minimum_s=900).kind == "cron"
    assert parse_schedule("every monday 07:00", "UTC", minimum_s=86400).kind == "cron"
