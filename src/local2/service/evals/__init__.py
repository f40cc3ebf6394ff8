"""The evals feature of the service: eval runs started, streamed, stopped, resumed, read
and compared (:class:`Evals`), each question answered by an agent beside the caller's; the
grader and a run's settings as a run makes them (the eval benchmark's baseline uses both)."""

from local2.service.evals._evals import Evals
from local2.service.evals._setup import make_grader, run_settings

__all__ = ["Evals", "make_grader", "run_settings"]
