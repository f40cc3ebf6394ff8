"""The typed contracts every layer shares: records a turn keeps, the payloads it returns,
the items its stream hands out, and the approval protocol.

- :mod:`.records`: a tool call, a memory hit, an event entry, a grade (the state's records);
- :mod:`.turn`: the turn payload and what the session endpoints return;
- :mod:`.research`: the research payload;
- :mod:`.stream`: the literal kinds of stream items;
- :mod:`.approval`: what a paused turn asks the person, and the answers it accepts.
"""
