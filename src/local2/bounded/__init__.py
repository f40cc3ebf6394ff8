"""Work on untrusted bytes done in a child process with memory, CPU and wall-clock limits.

Used by web_fetch's page extraction (``tools/extract_worker``) and by the document readers
(``documents/job``): each names its own entry module, which runs :func:`child.serve` with
its job; :class:`pool.WorkerPool` keeps such workers warm and hands them one job at a time.
"""

from local2.bounded._child import Limiter, OverBudget, headroom, serve, status_mb
from local2.bounded._pool import WorkerPool, pool_for

__all__ = [
    "Limiter",
    "OverBudget",
    "WorkerPool",
    "headroom",
    "pool_for",
    "serve",
    "status_mb",
]
