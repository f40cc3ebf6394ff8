"""Watching a topic (a feature: docs/architecture.md): schedules read into
APScheduler's triggers, due runs claimed once across processes, what changed between two
runs, and the words of the notice.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.watch.changes import what_changed as what_changed
    from local2.watch.create import add_watch as add_watch
    from local2.watch.create import new_watch as new_watch
    from local2.watch.due import DueRun as DueRun
    from local2.watch.due import DueRuns as DueRuns
    from local2.watch.due import RunWatch as RunWatch
    from local2.watch.notice import notice_text as notice_text
    from local2.watch.schedule import Schedule as Schedule
    from local2.watch.schedule import parse_schedule as parse_schedule
    from local2.watch.scheduler import WatchScheduler as WatchScheduler
    from local2.watch.telling import NOTIFY_ON as NOTIFY_ON
    from local2.watch.telling import should_tell as should_tell
    from local2.watch.telling import tell as tell
else:
    __getattr__ = lazy_face(__name__, __file__)
