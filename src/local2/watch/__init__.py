"""Watching a topic (a feature: docs/architecture.md): schedules read into
APScheduler's triggers, due runs claimed once across processes, what changed between two
runs, and the words of the notice.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
