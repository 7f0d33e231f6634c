"""The error spans protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it."""
from .strategy import PROTOCOLS, ErrorSpans

__all__ = ["ErrorSpans", "PROTOCOLS"]
