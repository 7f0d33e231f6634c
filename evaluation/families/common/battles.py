"""Battles: what a family that compares systems two at a time declares (`Family.battles`) for the Bradley–Terry
part (docs/methods.md §8.8). Plain arrays over the campaign's systems, in the codes of `stats.bradley_terry`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...stats import bradley_terry as bt


@dataclass(frozen=True)
class Battles:
    """`names` the systems (index order); per battle `a` and `b` (system indices, a shown first) and `outcome`
    (0 a wins, 1 b wins, 2 tie, 3 tie with both bad)."""

    names: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray

    @property
    def size(self) -> int:
        return int(self.a.size)

    @classmethod
    def from_results(cls, names: list[str], first, second, result) -> Battles:
        """From outcomes scored 1 (first better), 0 (tie), -1 (second better), as the ranking expands them."""
        result = np.asarray(result)
        outcome = np.where(result > 0, bt.A_WINS, np.where(result < 0, bt.B_WINS, bt.TIE))
        return cls(list(names), np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64),
                   outcome.astype(np.int64))


__all__ = ["Battles"]
