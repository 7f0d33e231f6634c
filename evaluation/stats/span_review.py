"""Review of error spans (two-stage MQM, docs/methods.md "Review of error spans"): how reviewers changed each
first-pass rater's spans, and each first-pass rater's precision and recall against the reviewed spans.

Plain numpy over flat arrays, one row per span. A *unit* is one review: one first-pass annotation (a judge's, or an
automatic system's) of one translation, reviewed by one reviewer. Categories and severities are integer codes;
category -1 means "no category" (ESA).

Matching rules (a first-pass span f and a reviewed span r of the same unit):

* `exact`: same start, same end, same severity and same category (the span was kept as it was);
* `lenient`: the characters they share are at least `threshold` (default 0.5) of the longer one's,
  |f ∩ r| ≥ threshold · max(|f|, |r|), whatever their severity and category; an omission (an empty span) matches
  only an omission at the same place.

Precision of a rater: the share of its first-pass spans that match some reviewed span of the same unit; recall:
the share of the reviewed spans of its units matched by some of its first-pass spans. Each span counts once, however
many spans of the other side it matches.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: What a review did with a first-pass span, as codes 0, 1, 2.
ACTIONS = ("kept", "changed", "deleted")
RULES = ("exact", "lenient")
LENIENT_OVERLAP = 0.5


def _ints(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


@dataclass(frozen=True)
class ChangeCounts:
    """counts[rater, category, severity, action] of first-pass spans (action: ACTIONS); shares: counts over the
    first-pass spans of the same rater, category and severity (NaN where there are none)."""

    counts: np.ndarray
    shares: np.ndarray


def change_counts(rater, category, severity, action, n_raters: int, n_categories: int, n_severities: int
                  ) -> ChangeCounts:
    """How often reviewers kept, changed and deleted each first-pass rater's spans, by the first-pass span's
    category and severity. One row per first-pass span; `category` -1 (no category) is counted as category 0 when
    `n_categories` is 1."""
    rater, severity, action = _ints(rater), _ints(severity), _ints(action)
    category = np.maximum(_ints(category), 0)
    if not (rater.size == category.size == severity.size == action.size):
        raise ValueError("rater, category, severity and action must have the same length")
    if action.size and (action.min() < 0 or action.max() >= len(ACTIONS)):
        raise ValueError("action must be 0 (kept), 1 (changed) or 2 (deleted)")
    shape = (n_raters, max(n_categories, 1), n_severities, len(ACTIONS))
    flat = np.ravel_multi_index((rater, category, severity, action), shape) if action.size else action
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
    totals = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(totals > 0, counts / np.maximum(totals, 1), np.nan)
    return ChangeCounts(counts, shares)


def _pairs(f_unit: np.ndarray, r_unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (first-pass span, reviewed span) of the same unit, as two index arrays, without a loop."""
    order = np.argsort(r_unit, kind="stable")
    sorted_units = r_unit[order]
    left = np.searchsorted(sorted_units, f_unit, side="left")
    count = np.searchsorted(sorted_units, f_unit, side="right") - left
    f_index = np.repeat(np.arange(f_unit.size), count)
    offsets = np.cumsum(count) - count
    r_index = order[left[f_index] + np.arange(f_index.size) - offsets[f_index]] if f_index.size else f_index
    return f_index, r_index


def match_spans(first: dict, reviewed: dict, rule: str = "lenient", threshold: float = LENIENT_OVERLAP
                ) -> tuple[np.ndarray, np.ndarray]:
    """(each first-pass span matched?, each reviewed span matched?) under `rule`. `first` and `reviewed` hold
    equal-length arrays `unit`, `start`, `end`, `severity`, `category`."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}")
    f = {k: _ints(first[k]) for k in ("unit", "start", "end", "severity", "category")}
    r = {k: _ints(reviewed[k]) for k in ("unit", "start", "end", "severity", "category")}
    fi, ri = _pairs(f["unit"], r["unit"])
    fs, fe, rs, re = f["start"][fi], f["end"][fi], r["start"][ri], r["end"][ri]
    if rule == "exact":
        hit = ((fs == rs) & (fe == re) & (f["severity"][fi] == r["severity"][ri])
               & (f["category"][fi] == r["category"][ri]))
    else:
        shared = np.minimum(fe, re) - np.maximum(fs, rs)
        longer = np.maximum(fe - fs, re - rs)
        empty = (fe == fs) & (re == rs)
        hit = np.where(empty, fs == rs, (longer > 0) & (shared > 0) & (shared >= threshold * longer))
    f_matched = np.bincount(fi[hit], minlength=f["unit"].size) > 0
    r_matched = np.bincount(ri[hit], minlength=r["unit"].size) > 0
    return f_matched, r_matched


@dataclass(frozen=True)
class PrecisionRecall:
    """Per first-pass rater: matched first-pass spans, first-pass spans, precision; matched reviewed spans,
    reviewed spans, recall (NaN where a count is 0)."""

    first_matched: np.ndarray
    first: np.ndarray
    precision: np.ndarray
    reviewed_matched: np.ndarray
    reviewed: np.ndarray
    recall: np.ndarray


def rater_precision_recall(first: dict, reviewed: dict, unit_rater, n_raters: int, rule: str = "lenient",
                           threshold: float = LENIENT_OVERLAP) -> PrecisionRecall:
    """Each first-pass rater's precision and recall against the reviewed spans (`unit_rater[u]`: the rater whose
    annotation unit u reviews), pooled over the rater's units."""
    unit_rater = _ints(unit_rater)
    f_matched, r_matched = match_spans(first, reviewed, rule, threshold)
    f_rater, r_rater = unit_rater[_ints(first["unit"])], unit_rater[_ints(reviewed["unit"])]
    n_first = np.bincount(f_rater, minlength=n_raters)
    n_reviewed = np.bincount(r_rater, minlength=n_raters)
    tp_first = np.bincount(f_rater, weights=f_matched, minlength=n_raters).astype(np.int64)
    tp_reviewed = np.bincount(r_rater, weights=r_matched, minlength=n_raters).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(n_first > 0, tp_first / np.maximum(n_first, 1), np.nan)
        recall = np.where(n_reviewed > 0, tp_reviewed / np.maximum(n_reviewed, 1), np.nan)
    return PrecisionRecall(tp_first, n_first, precision, tp_reviewed, n_reviewed, recall)


__all__ = ["ACTIONS", "ChangeCounts", "LENIENT_OVERLAP", "PrecisionRecall", "RULES", "change_counts", "match_spans",
           "rater_precision_recall"]
