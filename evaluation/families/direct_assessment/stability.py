"""Ranking stability for Direct Assessment (docs/methods.md §12): being built."""
from __future__ import annotations

from ..base import BadQuery


def stability(campaign, params):
    raise BadQuery("ranking stability is not available yet")
