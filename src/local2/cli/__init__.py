"""The ``local2`` command: one module per command group, each adding itself with
``register(app)`` (:mod:`local2.cli._main` assembles them).

- :mod:`._common`: the consoles, the shared options, how an agent is made;
- :mod:`._errors`: the errors a person can act on, as a message and an exit code;
- :mod:`._render`: how a turn looks at a terminal;
- :mod:`._turns` (ask, chat), :mod:`._sessions` (history, replay, feedback), :mod:`._doctor`,
  :mod:`._memory`, :mod:`._files`, :mod:`._compare` (retry, arena), :mod:`._research`,
  :mod:`._evals` (eval; :mod:`._eval_render`: its bar and tables),
  :mod:`._stories`, :mod:`._serve` (ui, serve), :mod:`._users` (people on a team server;
  :mod:`._people`: who a command acts for, ``--as``).

Importing this package imports nothing else (``import local2.cli`` leaves the garbage
collector alone); ``app`` is the Typer application, loaded on first use.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
