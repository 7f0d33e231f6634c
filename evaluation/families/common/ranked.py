"""Ranking systems by a score and its bootstrap runs, and the settings those runs take from a campaign: what the
ranking and constituent-acceptance families share (docs/methods.md §8)."""
from __future__ import annotations

import numpy as np

from annotation.models import Campaign, System

from ...stats import trueskill as ts

MAX_BOOTSTRAP_RUNS = 1000
#: The rank ranges' and intervals' coverage.
CONFIDENCE = 0.95


def system_names(campaign: Campaign) -> list[str]:
    """The campaign's systems in index order (the order the import created them: by name)."""
    return list(System.objects.filter(campaign=campaign).order_by("pk").values_list("name", flat=True))


def bootstrap_runs(campaign: Campaign) -> int:
    """The campaign's `bootstrap_runs` option (default 100), at most MAX_BOOTSTRAP_RUNS."""
    return min(int((campaign.options or {}).get("bootstrap_runs", 100)), MAX_BOOTSTRAP_RUNS)


def ranked_table(score: np.ndarray, runs: np.ndarray | None, confidence: float) -> dict[str, np.ndarray]:
    """Rank, rank range and cluster from bootstrap runs of a score (WMT14's rule, `stats.trueskill.rank_ranges`),
    with the percentile interval of the score; without runs, ranks by the score alone."""
    n = score.size
    finite = np.isfinite(score)
    if runs is None or runs.shape[0] == 0:
        order = np.lexsort((np.arange(n), -np.nan_to_num(score, nan=-np.inf)))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(1, n + 1)
        return {"rank": rank, "rank_low": rank, "rank_high": rank, "cluster": np.full(n, -1), "low": np.full(n, np.nan),
                "high": np.full(n, np.nan)}
    filled = np.where(np.isfinite(runs), runs, -np.inf)
    with np.errstate(invalid="ignore"):  # a run where a system was never compared ranks it last (-inf)
        ranges = ts.rank_ranges(filled, confidence)
    # The order is the score's on all the data (a run's mean of a ratio is not the ratio of the means).
    order = np.lexsort((np.arange(n), -np.nan_to_num(score, nan=-np.inf)))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    cluster = ts.clusters_from_ranges(order, ranges.rank_low, ranges.rank_high)
    tail = (1 - confidence) / 2 * 100
    with np.errstate(all="ignore"):
        low, high = np.nanpercentile(np.where(np.isfinite(runs), runs, np.nan), [tail, 100 - tail], axis=0)
    return {"rank": rank, "rank_low": ranges.rank_low, "rank_high": ranges.rank_high,
            "cluster": np.where(finite, cluster, -1), "low": low, "high": high}
