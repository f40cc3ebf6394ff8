"""The research feature of the service: runs started, streamed, resumed, steered, read and
listed (:class:`Research`), one at a time per run, with the person's input checked before
it reaches a run and the library's part in a run's sources and keep."""

from local2.service.research._exports import Exported as Exported
from local2.service.research._exports import export_format as export_format
from local2.service.research._exports import export_run as export_run
from local2.service.research._research import Research as Research
from local2.service.research._research import run_config as run_config
from local2.service.research._research import run_scope as run_scope
from local2.service.research._research import run_sources as run_sources

__all__ = [
    "Exported",
    "Research",
    "export_format",
    "export_run",
    "run_config",
    "run_scope",
    "run_sources",
]
