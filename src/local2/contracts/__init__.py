"""The typed contracts every layer shares: records a turn keeps, the payloads it returns,
the items its stream hands out, and the approval protocol.

- :mod:`._records`: a tool call, a memory hit, an event entry, a grade (the state's records);
- :mod:`._turn`: the turn payload and what the session endpoints return;
- :mod:`._research`: the research payload;
- :mod:`._watch`: what a watch's run found changed, and watches as a person sees them;
- :mod:`._sources`: what a citation needs to know about a source (its bibliographic record);
- :mod:`._stream`: the literal kinds of stream items;
- :mod:`.approval`: what a paused turn asks the person, and the answers it accepts;
- :mod:`._tool_names`: the built-in tools' names.
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
