"""Test-set difficulty calibration across years (docs/methods.md §5; Graham et al. 2014 §4, Tables 3-5)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _grouping as g
from ._ranktests import RankSample, mwu

__all__ = ["Calibration", "calibrate"]


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate` (all means in the units of the input scores).

    ``curr_old``, ``curr_new``: benchmark (CURR) system means on the old and
    new test sets; ``delta = curr_old - curr_new`` (test-set difficulty
    change).  ``best_old``, ``best_new``: means of the systems being
    compared; ``difference = best_new - best_old`` (uncalibrated);
    ``gain = difference + delta`` (calibrated gain).  ``n_*``: sample sizes.

    One-sided Wilcoxon rank-sum p-values, one per direction:
    ``p_curr_old_better`` (CURR scores higher on the old set),
    ``p_curr_new_better``, ``p_best_new_better`` (an improvement),
    ``p_best_old_better``.  Graham et al. 2014 marks (with stars) whichever of the two
    scores is significantly higher, so both directions are given.
    """

    curr_old: float
    curr_new: float
    delta: float
    best_old: float
    best_new: float
    difference: float
    gain: float
    n_curr_old: int
    n_curr_new: int
    n_best_old: int
    n_best_new: int
    p_curr_old_better: float
    p_curr_new_better: float
    p_best_new_better: float
    p_best_old_better: float


def _mean(x) -> float:
    return float(x.mean()) if x.size else math.nan


def calibrate(curr_old, curr_new, best_old, best_new) -> Calibration:
    """Difficulty-calibrated gain of a new system over an old one (Graham et al. 2014 §4; docs/methods.md §5).

    A benchmark system (CURR) is run on both the old and the new test set;
    its mean score difference ``delta = mean(curr_old) - mean(curr_new)``
    measures how much harder the new test set is.  The gain of the new
    system over the old one is then ``(mean(best_new) - mean(best_old)) +
    delta`` (Graham et al. 2014 Table 3: ``BEST12 - BEST07 + delta``; e.g. fluency
    ``(58.0 - 53.5) + (64.1 - 58.2) = 4.5 + 5.9 = 10.4``).

    Inputs: one score per assessed translation of each of the four
    system/test-set combinations (raw or z; Graham et al. 2014 reports both; judgments or
    per-translation means -- the caller decides, the means are plain means
    of what is passed).  Significance of each *observed* difference (CURR
    old vs new, BEST new vs old) by the **unpaired one-sided** Wilcoxon
    rank-sum test, in both directions, e.g. ``p_best_new_better =
    scipy.stats.mannwhitneyu(best_new, best_old,
    alternative="greater").pvalue`` (scipy defaults).  The paper tests the
    two differences, not the gain itself (delta is estimated from other
    translations), and neither is done here.  Empty input -> NaN means and
    p-values.
    """
    co = g.as_scores(curr_old, "curr_old")
    cn = g.as_scores(curr_new, "curr_new")
    bo = g.as_scores(best_old, "best_old")
    bn = g.as_scores(best_new, "best_new")
    # R's wilcox.test conventions, as for the significance between systems (docs/methods.md §5.3-§5.4)
    _, p_co, p_cn = mwu(RankSample(co), RankSample(cn), method="r")
    _, p_bn, p_bo = mwu(RankSample(bn), RankSample(bo), method="r")
    curr_old_m, curr_new_m = _mean(co), _mean(cn)
    best_old_m, best_new_m = _mean(bo), _mean(bn)
    delta = curr_old_m - curr_new_m
    difference = best_new_m - best_old_m
    return Calibration(
        curr_old=curr_old_m,
        curr_new=curr_new_m,
        delta=delta,
        best_old=best_old_m,
        best_new=best_new_m,
        difference=difference,
        gain=difference + delta,
        n_curr_old=int(co.size),
        n_curr_new=int(cn.size),
        n_best_old=int(bo.size),
        n_best_new=int(bn.size),
        p_curr_old_better=p_co,
        p_curr_new_better=p_cn,
        p_best_new_better=p_bn,
        p_best_old_better=p_bo,
    )
