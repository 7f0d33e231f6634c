"""The error spans protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it."""
from .strategy import PROTOCOLS as _SINGLE_AND_CONTRASTIVE
from .strategy import ErrorSpans
from .sxs_strategy import MQM_SXS

#: ESA, MQM, contrastive ESA, then MQM side by side (sxs_strategy.py), in the order of the protocol choices.
PROTOCOLS = (*_SINGLE_AND_CONTRASTIVE, MQM_SXS)

__all__ = ["ErrorSpans", "PROTOCOLS"]
