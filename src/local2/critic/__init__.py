"""The critic: a judge model grades each answer 1-5; grounding checks flag what was never seen.

``make_critic`` returns ``None`` when the critic is switched off, which is how the
graph knows to skip the ``critique`` node's work.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
