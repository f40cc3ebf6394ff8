"""Work on untrusted bytes done in a child process with memory, CPU and wall-clock limits.

Used by web_fetch's page extraction (``tools/extract_worker``) and by the document readers
(``documents/job``): each names its own entry module, which runs :func:`child.serve` with
its job; :class:`pool.WorkerPool` keeps such workers warm and hands them one job at a time.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.bounded.child import Limiter as Limiter
    from local2.bounded.child import OverBudget as OverBudget
    from local2.bounded.child import headroom as headroom
    from local2.bounded.child import serve as serve
    from local2.bounded.child import status_mb as status_mb
    from local2.bounded.pool import WorkerPool as WorkerPool
    from local2.bounded.pool import pool_for as pool_for
else:
    __getattr__ = lazy_face(__name__, __file__)
