"""The evals feature of the service: eval runs started, streamed, stopped, resumed, read
and compared (:class:`Evals`), each question answered by an agent beside the caller's."""

from local2.service.evals._evals import Evals as Evals

__all__ = ["Evals"]
