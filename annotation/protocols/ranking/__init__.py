"""The ranking protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it."""
from .strategy import PROTOCOLS, RANKING_OPTIONS, Ranking

__all__ = ["PROTOCOLS", "RANKING_OPTIONS", "Ranking"]
