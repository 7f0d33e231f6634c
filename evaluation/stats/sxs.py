"""Side-by-side error-span statistics (MQM-SxS, contrastive ESA; docs/methods.md#side-by-side; Song et al. 2025):
pairwise win rates of systems shown on the same screen, and the consistency of marking the same words alike
across the columns of one screen, with and without the screen's hint. Pure numpy; no Django."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class WinRates:
    """wins[a, b]: screens on which system a scored better than b; ties[a, b] = ties[b, a]; n = wins + wins.T +
    ties, the screens that showed both (with a finite score for each)."""

    wins: np.ndarray
    ties: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.wins + self.wins.T + self.ties


def win_rates(screen, system, score, n_systems: int) -> WinRates:
    """Every pair of rows on the same screen (one judge, one item: `screen`) with different systems and finite
    scores, compared by score (higher is better: the ESA score, or minus the MQM penalty)."""
    screen = np.asarray(screen, dtype=np.int64)
    system = np.asarray(system, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    wins = np.zeros((n_systems, n_systems), dtype=np.int64)
    ties = np.zeros((n_systems, n_systems), dtype=np.int64)
    keep = np.isfinite(score)
    screen, system, score = screen[keep], system[keep], score[keep]
    if screen.size < 2:
        return WinRates(wins, ties)
    order = np.argsort(screen, kind="stable")
    screen, system, score = screen[order], system[order], score[order]
    _, first, counts = np.unique(screen, return_index=True, return_counts=True)
    end = np.repeat(first + counts, counts)  # one past the last row of each row's screen
    later = end - np.arange(screen.size) - 1  # how many rows of its screen follow each row
    left = np.repeat(np.arange(screen.size), later)
    right = left + 1 + np.arange(left.size) - np.repeat(np.cumsum(later) - later, later)
    differ = system[left] != system[right]
    left, right = left[differ], right[differ]
    a, b, va, vb = system[left], system[right], score[left], score[right]
    np.add.at(wins, (a[va > vb], b[va > vb]), 1)
    np.add.at(wins, (b[vb > va], a[vb > va]), 1)
    tied = va == vb
    np.add.at(ties, (a[tied], b[tied]), 1)
    np.add.at(ties, (b[tied], a[tied]), 1)
    return WinRates(wins, ties)


@dataclass(frozen=True)
class Occurrence:
    """One pair of identical text occurrences in two columns of one screen: each side's column, offsets and
    severity (None: that occurrence is not marked as exactly these words)."""

    column_a: int
    start_a: int
    end_a: int
    severity_a: str | None
    column_b: int
    start_b: int
    end_b: int
    severity_b: str | None


def _occurrences(text: str, words: str):
    at = text.find(words)
    while at >= 0:
        yield at
        at = text.find(words, at + 1)


def identical_pairs(texts: list[str], spans: list[list[tuple[int, int, str]]]) -> list[Occurrence]:
    """The pairs of identical text across the columns of one screen where at least one side is marked: for each
    marked span (start < end; omissions have no words) of each column, every occurrence of its words in every
    other column. A pair is counted once, however many of its sides are marked. Offsets index `texts` (code
    points in Python's str)."""
    marked = [{(s, e): severity for s, e, severity in column if s < e} for column in spans]
    pairs: dict[tuple, Occurrence] = {}
    for x, column in enumerate(marked):
        for start, end in column:
            words = texts[x][start:end]
            for y, text in enumerate(texts):
                if y == x:
                    continue
                for at in _occurrences(text, words):
                    side_x, side_y = (x, start, end), (y, at, at + len(words))
                    key = (side_x, side_y) if side_x < side_y else (side_y, side_x)
                    if key not in pairs:
                        (ca, sa, ea), (cb, sb, eb) = key
                        pairs[key] = Occurrence(ca, sa, ea, marked[ca].get((sa, ea)), cb, sb, eb,
                                                marked[cb].get((sb, eb)))
    return list(pairs.values())


@dataclass(frozen=True)
class Consistency:
    """Of `pairs` pairs of identical text (at least one side marked), `alike` were both marked with the same
    severity and `both_marked` were both marked at all; `share` = alike / pairs (NaN without pairs)."""

    pairs: int
    both_marked: int
    alike: int

    @property
    def share(self) -> float:
        return self.alike / self.pairs if self.pairs else float("nan")

    @property
    def share_marked(self) -> float:
        return self.both_marked / self.pairs if self.pairs else float("nan")


def consistency(severity_a, severity_b, hinted=None) -> dict[str, Consistency]:
    """The share of identical spans marked alike across columns, over all pairs and split by whether the screen
    hinted at the pair ("all", "hint", "no hint"). Severities are codes: -1 for an unmarked side, else the
    severity's index."""
    a = np.asarray(severity_a, dtype=np.int64)
    b = np.asarray(severity_b, dtype=np.int64)
    hinted = np.zeros(a.size, dtype=bool) if hinted is None else np.asarray(hinted, dtype=bool)
    both = (a >= 0) & (b >= 0)
    alike = both & (a == b)
    out = {}
    for name, rows in (("all", np.ones(a.size, dtype=bool)), ("hint", hinted), ("no hint", ~hinted)):
        out[name] = Consistency(int(rows.sum()), int((both & rows).sum()), int((alike & rows).sum()))
    return out
