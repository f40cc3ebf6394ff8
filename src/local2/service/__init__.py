"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent`, which
composes its one-job parts (``agent.turns``, ``agent.sessions``...: the "One way in" table),
built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk to the agent's
parts and to this face, nothing below it but other packages' faces (an import-linter
contract keeps them out).

The face (below) lists only the service's own names: the agent and how it is built, the
turn options, sign-in (:mod:`.sign_in`), and what the commands that open no agent need
(stores opened alone, the desks, reports). A name of a package below (a vote's rating, the
people roster) is imported from that package's face. Each name is loaded on first use, so
``import local2.service`` costs nothing and a command pays only for what it uses.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
