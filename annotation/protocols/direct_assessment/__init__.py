"""The direct assessment protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it.
`DirectAssessment` is the base of a deployment's own slider protocol (tests/families/test_toy_family.py)."""
from .strategy import DA_OPTIONS, PROTOCOLS, SQM_MARKS, DirectAssessment

__all__ = ["DA_OPTIONS", "DirectAssessment", "PROTOCOLS", "SQM_MARKS"]
