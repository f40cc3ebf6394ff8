"""Work on untrusted bytes done in a child process with memory, CPU and wall-clock limits.

Used by web_fetch's page extraction (``tools/_extract_worker``) and by the document readers
(``documents/job``): each names its own entry module, which runs :func:`serve` with
its job; :class:`WorkerPool` keeps such workers warm and hands them one job at a time.
"""

from local2.bounded._workers import (
    Limiter,
    OverBudget,
    WorkerPool,
    headroom,
    pool_for,
    serve,
    status_mb,
)

__all__ = [
    "Limiter",
    "OverBudget",
    "WorkerPool",
    "headroom",
    "pool_for",
    "serve",
    "status_mb",
]
