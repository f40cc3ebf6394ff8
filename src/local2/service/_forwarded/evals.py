"""What the service's face forwards from :mod:`local2.evals`."""

from local2.evals import percent, say_duration, say_rate, short_rate

__all__ = ["percent", "say_duration", "say_rate", "short_rate"]
