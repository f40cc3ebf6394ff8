"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent` façade and its
one-job parts, built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk
to the agent and to this face, nothing below it (an import-linter contract keeps them out).

The face (below) is what a surface may use: the agent and how it is built, the turn options,
and what the commands that open no agent need (stores opened alone, reports, the test
stories). Each name is loaded on first use, so ``import local2.service`` costs nothing and a
command pays only for what it uses.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
