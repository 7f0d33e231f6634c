"""Power and cost from a pilot for Direct Assessment (docs/methods.md §12): being built."""
from __future__ import annotations

from ..base import BadQuery


def power(campaign, params):
    raise BadQuery("power estimates are not available yet")
