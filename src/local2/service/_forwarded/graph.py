"""What the service's face forwards from :mod:`local2.graph`."""

from local2.graph import TurnGraph, TurnState, turn_payload

__all__ = ["TurnGraph", "TurnState", "turn_payload"]
