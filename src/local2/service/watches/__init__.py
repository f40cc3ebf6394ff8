"""The watches feature of the service: research questions on a schedule, each due time one
ordinary research run, told to the person what changed since the last one."""

from local2.service.watches._desk import WatchDesk as WatchDesk
from local2.service.watches._desk import open_watch_desk as open_watch_desk
from local2.service.watches._feed import FEED_PATH as FEED_PATH
from local2.service.watches._feed import WatchFeed as WatchFeed
from local2.service.watches._runner import WatchRunner as WatchRunner
from local2.service.watches._watching import Watching as Watching

__all__ = ["FEED_PATH", "WatchDesk", "WatchFeed", "WatchRunner", "Watching", "open_watch_desk"]
