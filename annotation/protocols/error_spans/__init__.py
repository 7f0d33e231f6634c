"""The error spans protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it."""
from .review import PROTOCOLS as REVIEW_PROTOCOLS
from .strategy import PROTOCOLS as SPAN_PROTOCOLS
from .strategy import ErrorSpans

#: The error-span protocols, then their review stages (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (*SPAN_PROTOCOLS, *REVIEW_PROTOCOLS)

__all__ = ["ErrorSpans", "PROTOCOLS"]
