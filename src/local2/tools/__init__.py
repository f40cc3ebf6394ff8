"""The tools the model may call: each one carries its schema, its description (from
``generator.yaml``) and what else is known about it; :mod:`._registry` lists the defaults."""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
