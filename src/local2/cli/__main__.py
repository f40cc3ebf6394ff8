"""``python -m local2.cli``: the ``local2`` command."""

import local2.cli._gc_pause as gc_pause

gc_pause.pause()  # before the command's imports

from local2.cli._main import app  # noqa: E402

app()
