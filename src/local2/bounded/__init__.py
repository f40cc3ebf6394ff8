"""Work on untrusted bytes done in a child process with memory, CPU and wall-clock limits.

Used by web_fetch's page extraction (``tools/extract_worker``) and by the document readers
(``documents/job``): each names its own entry module, which runs :func:`child.serve` with
its job; :class:`pool.WorkerPool` keeps such workers warm and hands them one job at a time.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Limiter": "local2.bounded.child",
    "OverBudget": "local2.bounded.child",
    "WorkerPool": "local2.bounded.pool",
    "headroom": "local2.bounded.child",
    "pool_for": "local2.bounded.pool",
    "serve": "local2.bounded.child",
    "status_mb": "local2.bounded.child",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "Limiter",
    "OverBudget",
    "WorkerPool",
    "headroom",
    "pool_for",
    "serve",
    "status_mb",
]
