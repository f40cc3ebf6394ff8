"""The research feature of the service: runs started, streamed, resumed, steered, read and
listed (:class:`Research`), one at a time per run, with the person's input checked before
it reaches a run and the library's part in a run's sources and keep."""

from local2.service.research._driver import run_config as run_config
from local2.service.research._research import Research as Research

__all__ = ["Research", "run_config"]
