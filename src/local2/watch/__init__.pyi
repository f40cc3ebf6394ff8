from .changes import what_changed as what_changed
from .create import add_watch as add_watch
from .create import new_watch as new_watch
from .due import DueRun as DueRun
from .due import DueRuns as DueRuns
from .due import RunWatch as RunWatch
from .notice import notice_text as notice_text
from .schedule import Schedule as Schedule
from .schedule import parse_schedule as parse_schedule
from .scheduler import WatchScheduler as WatchScheduler
from .telling import NOTIFY_ON as NOTIFY_ON
from .telling import should_tell as should_tell
from .telling import tell as tell

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
