"""``python -m local2.cli``: the ``local2`` command."""

from local2.cli import gc_pause

gc_pause.pause()  # before the command's imports

from local2.cli.main import app  # noqa: E402

app()
