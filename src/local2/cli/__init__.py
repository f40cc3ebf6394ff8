"""The ``local2`` command: one module per command group, each adding itself with
``register(app)`` (:mod:`local2.cli.main` assembles them).

- :mod:`.common`: the consoles, the shared options, how an agent is made;
- :mod:`.errors`: the errors a person can act on, as a message and an exit code;
- :mod:`.render`: how a turn looks at a terminal;
- :mod:`.turns` (ask, chat), :mod:`.sessions` (history, replay, feedback), :mod:`.doctor`,
  :mod:`.memory`, :mod:`.files`, :mod:`.compare` (retry, arena), :mod:`.research`,
  :mod:`.evals` (eval; :mod:`.eval_render`: its bar and tables),
  :mod:`.stories`, :mod:`.serve` (ui, serve), :mod:`.users` (people on a team server;
  :mod:`.people`: who a command acts for, ``--as``).

Importing this package imports nothing else (``import local2.cli`` leaves the garbage
collector alone); ``app`` is the Typer application, loaded on first use.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
