"""The error spans protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it."""
from .contrastive_strategy import CONTRASTIVE_ESA
from .review_strategy import PROTOCOLS as REVIEW_PROTOCOLS
from .strategy import PROTOCOLS as SPAN_PROTOCOLS
from .strategy import ErrorSpans
from .sxs_strategy import MQM_SXS

#: ESA, MQM, contrastive ESA (contrastive_strategy.py), MQM side by side (sxs_strategy.py), then the review stages,
#: in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (*SPAN_PROTOCOLS, CONTRASTIVE_ESA, MQM_SXS, *REVIEW_PROTOCOLS)

__all__ = ["ErrorSpans", "PROTOCOLS"]
