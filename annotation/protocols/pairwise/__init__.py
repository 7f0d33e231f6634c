"""The pairwise protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it.
The spam-miss default is read by the pairwise result family."""
from .strategy import DEFAULT_MAX_SPAM_MISS_RATE, PROTOCOLS, TWO_SYSTEMS, Pairwise

__all__ = ["DEFAULT_MAX_SPAM_MISS_RATE", "PROTOCOLS", "Pairwise", "TWO_SYSTEMS"]
