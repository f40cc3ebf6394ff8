"""The watches feature of the service: research questions on a schedule, each due time one
ordinary research run, told to the person what changed since the last one."""

from local2.service.watches._desk import WatchDesk as WatchDesk
from local2.service.watches._desk import open_watch_desk as open_watch_desk
from local2.service.watches._runner import WatchRunner as WatchRunner

__all__ = ["WatchDesk", "WatchRunner", "open_watch_desk"]
