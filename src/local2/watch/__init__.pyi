from ._changes import what_changed as what_changed
from ._create import add_watch as add_watch
from ._create import new_watch as new_watch
from ._due import DueRun as DueRun
from ._due import DueRuns as DueRuns
from ._due import RunWatch as RunWatch
from ._notice import notice_text as notice_text
from ._schedule import Schedule as Schedule
from ._schedule import parse_schedule as parse_schedule
from ._scheduler import WatchScheduler as WatchScheduler
from ._telling import NOTIFY_ON as NOTIFY_ON
from ._telling import should_tell as should_tell
from ._telling import tell as tell

__all__ = [
    "NOTIFY_ON",
    "DueRun",
    "DueRuns",
    "RunWatch",
    "Schedule",
    "WatchScheduler",
    "add_watch",
    "new_watch",
    "notice_text",
    "parse_schedule",
    "should_tell",
    "tell",
    "what_changed",
]
