"""Adaptive allocation for Direct Assessment (docs/methods.md §12): being built."""
from __future__ import annotations

ADAPTIVE = None
