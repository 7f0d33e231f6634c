"""Pairwise ranking of two systems: preference counts, the sign test and spam items.

docs/methods.md §3 (spam items) and §7 (pairwise ranking of documents and sentences); Läubli et al. 2018
§2.2, Table 1 and Appendix.  Majority votes and agreement over the same judgments are in
``pairwise_agreement.py``.

Conventions
-----------
* One row per judgment.  ``choice`` is an integer code: ``CHOICE_A = 0``
  (the first of the campaign's two systems preferred), ``CHOICE_B = 1``
  (the second preferred), ``CHOICE_TIE = 2``.  To reproduce Läubli et al.'s numbers
  encode MT as A and Human as B: then ``a``, ``b``, ``t`` and the sign
  test's ``x = b`` are exactly the paper's.
* ``rater`` and ``condition`` are codes ``0..n-1`` (the caller encodes
  condition = unit (document / sentence) x criterion (adequacy / fluency));
  ``item`` codes are any non-negative integers and must identify the item
  *within its condition* (the same document rated for fluency and for
  adequacy is two items), because agreement pairs are formed per item.
* Spam (§3) rows never enter counts, majority votes or agreement: drop them
  (or pass them as ``exclude``) and score them with :func:`spam_misses`.
* Results are frozen dataclasses with read-only numpy arrays; NaN means
  "not computable" (no data, or an undefined statistic); integer labels use
  -1 for "no label".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _grouping as g

__all__ = [
    "CHOICE_A",
    "CHOICE_B",
    "CHOICE_TIE",
    "N_LABELS",
    "PreferenceCounts",
    "SignTest",
    "SpamMisses",
    "preference_counts",
    "sign_test",
    "spam_misses",
    "excluded_raters",
    "as_choice",
]

#: Choice codes (one per judgment).
CHOICE_A = 0
CHOICE_B = 1
CHOICE_TIE = 2
#: How many choice codes there are (A, B, tie).
N_LABELS = 3


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PreferenceCounts:
    """Result of :func:`preference_counts`.

    Per condition code (length ``n_conditions``): ``a`` (A preferred), ``b``
    (B preferred), ``t`` (ties), ``n = a + b + t`` and ``n_excluded`` (rows
    of that condition dropped by ``exclude``).  Per (condition, rater)
    (shape ``n_conditions x n_raters``): ``rater_a``, ``rater_b``,
    ``rater_t``, ``rater_n`` -- Läubli et al. 2018 Table 1.  All int64.
    """

    a: np.ndarray
    b: np.ndarray
    t: np.ndarray
    n: np.ndarray
    n_excluded: np.ndarray
    rater_a: np.ndarray
    rater_b: np.ndarray
    rater_t: np.ndarray
    rater_n: np.ndarray

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class SignTest:
    """Result of :func:`sign_test` (arrays broadcast from the inputs' shape).

    ``x``: successes (float: ``b``, or ``b + t/2`` which may be a
    half-integer); ``n``: trials (int64); ``share = x / n``; ``p``: two-sided
    exact p-value (NaN where ``n == 0``).  ``ties`` and ``half`` record the
    options used.
    """

    x: np.ndarray
    n: np.ndarray
    share: np.ndarray
    p: np.ndarray
    ties: str
    half: str

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class SpamMisses:
    """Result of :func:`spam_misses` (arrays indexed by rater code).

    ``seen``: spam judgments; ``missed = missed_spam + missed_ties``;
    ``missed_spam``: the spam candidate preferred; ``missed_ties``: a tie
    given (reported apart, Läubli et al. 2018 Appendix); ``miss_rate = missed / seen``
    (NaN where ``seen == 0``).
    """

    seen: np.ndarray
    missed: np.ndarray
    missed_spam: np.ndarray
    missed_ties: np.ndarray
    miss_rate: np.ndarray

    def __post_init__(self):
        g.freeze(self)


# --------------------------------------------------------------------------- helpers


def as_choice(choice) -> np.ndarray:
    return g.as_codes(choice, N_LABELS, "choice")


def _as_mask(mask, n: int, name: str) -> np.ndarray:
    if mask is None:
        return np.zeros(n, dtype=bool)
    m = np.asarray(mask)
    if m.ndim != 1 or m.size != n:
        raise ValueError(f"{name} must be a one-dimensional mask of length {n}, got shape {m.shape}")
    if m.size and m.dtype != np.bool_:
        raise TypeError(f"{name} must be a boolean array, got {m.dtype}")
    return m.astype(bool, copy=False)


def _as_counts(x, name: str) -> np.ndarray:
    """Non-negative integral counts (any integer or integral float dtype) as int64."""
    a = np.asarray(x)
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer counts, got {a.dtype}")
    if np.issubdtype(a.dtype, np.floating):
        if not np.isfinite(a).all() or (a != np.round(a)).any():
            raise ValueError(f"{name} must hold whole numbers")
    a = a.astype(np.int64)
    if (a < 0).any():
        raise ValueError(f"{name} must be non-negative")
    return a


def _binom_two_sided(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial p at p0 = 1/2 for integer ``k`` successes in ``n``.

    By symmetry the two tails are ``P(X <= lo)`` and ``P(X >= n - lo)`` with
    ``lo = min(k, n - k)``: ``p = min(1, cdf(lo) + sf(n - lo - 1))`` and
    ``p = 1`` when ``k = n / 2`` -- term for term what
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` adds up.  ``n == 0`` -> NaN.
    """
    lo = np.minimum(k, n - k)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = stats.binom.cdf(lo, n, 0.5) + stats.binom.sf(n - lo - 1, n, 0.5)
    p = np.minimum(1.0, np.asarray(p, dtype=np.float64))
    p = np.where(2 * lo == n, 1.0, p)
    return np.where(n == 0, np.nan, p)


# --------------------------------------------------------------------------- counts and sign test


def preference_counts(condition, rater, choice, n_conditions: int, n_raters: int, exclude=None) -> PreferenceCounts:
    """Counts a (A preferred), b (B preferred), t (ties) per condition and rater (docs/methods.md §7).

    Läubli et al. 2018, Table 1.

    One row per judgment: ``condition`` code, ``rater`` code, ``choice``
    (0 = A, 1 = B, 2 = tie).  ``exclude`` is an optional boolean row mask
    of judgments that must not count: spam items (§3: spam rows *never*
    count -- pass ``is_spam``, or drop them beforehand), and if wanted the
    rows of excluded raters (``is_spam | excluded[rater]``) or sentences
    whose document the rater saw (Läubli et al. 2018 §2.3).  Ties are counted, not
    dropped: the sign test decides what to do with them.  Counting is one
    ``bincount``; every count is an exact integer, nothing is NaN.
    """
    condition = g.as_codes(condition, n_conditions, "condition")
    rater = g.as_codes(rater, n_raters, "rater")
    choice = as_choice(choice)
    n = g.check_same_length(condition=condition, rater=rater, choice=choice)
    drop = _as_mask(exclude, n, "exclude")
    keep = ~drop
    key = (condition[keep] * n_raters + rater[keep]) * N_LABELS + choice[keep]
    cube = np.bincount(key, minlength=n_conditions * n_raters * N_LABELS).astype(np.int64)
    cube = cube.reshape(n_conditions, n_raters, N_LABELS)
    per_cond = cube.sum(axis=1)
    return PreferenceCounts(
        a=per_cond[:, CHOICE_A].copy(),
        b=per_cond[:, CHOICE_B].copy(),
        t=per_cond[:, CHOICE_TIE].copy(),
        n=per_cond.sum(axis=1),
        n_excluded=g.group_count(condition[drop], n_conditions),
        rater_a=cube[:, :, CHOICE_A].copy(),
        rater_b=cube[:, :, CHOICE_B].copy(),
        rater_t=cube[:, :, CHOICE_TIE].copy(),
        rater_n=cube.sum(axis=2),
    )


def sign_test(a, b, t=0, ties: str = "exclude", half: str = "conservative") -> SignTest:
    """Two-sided exact sign test of A vs B preferences (docs/methods.md §7; Läubli et al. 2018 §2.2 and footnote 3).

    Vectorised over broadcastable arrays of counts ``a`` (A preferred), ``b``
    (B preferred), ``t`` (ties).  H0: either system is preferred with
    probability 1/2; the test is **two-sided** (a preference for A or for B
    is equally evidence against H0).

    Ties:

    * ``ties="exclude"`` (default, Läubli et al. 2018 §2.2): ``x = b``, ``n = a + b`` --
      ties are dropped.  ``p`` equals
      ``scipy.stats.binomtest(x, n, 0.5, alternative="two-sided").pvalue``
      exactly (same terms, same sum).
    * ``ties="emerson-simon"`` (Emerson & Simon 1979, Läubli et al. 2018 footnote 3): each
      tie counts as half a success, ``x = b + t/2``, ``n = a + b + t``.
      With an even ``t``, ``x`` is an integer and ``p`` is the binomtest
      p-value as above.  With an odd ``t``, ``x`` is a half-integer and the
      binomial has no mass there; ``half`` chooses the exact method:

      - ``"conservative"`` (default): round ``x`` half a step *towards*
        ``n/2`` (towards H0), i.e. take the larger of the two neighbouring
        exact p-values -- the test never rejects more often than either
        integer neighbour would;
      - ``"average"``: the mean of the exact p-values at ``floor(x)`` and
        ``ceil(x)``.

    Not computable -> NaN: ``n == 0`` (no preferences at all; e.g. only
    ties with ``ties="exclude"``).  ``x = n/2`` gives ``p = 1``.  Counts must
    be non-negative whole numbers (ValueError otherwise).
    """
    if ties not in ("exclude", "emerson-simon"):
        raise ValueError("ties must be 'exclude' or 'emerson-simon'")
    if half not in ("conservative", "average"):
        raise ValueError("half must be 'conservative' or 'average'")
    a, b, t = np.broadcast_arrays(_as_counts(a, "a"), _as_counts(b, "b"), _as_counts(t, "t"))
    if ties == "exclude":
        n = a + b
        x2 = 2 * b
    else:
        n = a + b + t
        x2 = 2 * b + t
    # Work in half units: x2 = 2x, lo2 = 2 * min(x, n - x).
    lo2 = np.minimum(x2, 2 * n - x2)
    odd = lo2 % 2 == 1
    p_floor = _binom_two_sided(lo2 // 2, n)
    p_ceil = _binom_two_sided((lo2 + 1) // 2, n)  # equal to p_floor where lo2 is even
    if half == "conservative":
        p = np.where(odd, np.maximum(p_floor, p_ceil), p_floor)
    else:
        p = np.where(odd, 0.5 * (p_floor + p_ceil), p_floor)
    p = np.where(lo2 == n, np.where(n == 0, np.nan, 1.0), p)  # x exactly n/2
    x = x2 / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, x / np.where(n > 0, n, 1), np.nan)
    return SignTest(x=np.array(x, dtype=np.float64), n=np.array(n, dtype=np.int64),
                    share=np.array(share, dtype=np.float64), p=np.array(p, dtype=np.float64),
                    ties=ties, half=half)


# --------------------------------------------------------------------------- spam


def spam_misses(rater, chose_spam, chose_tie, n_raters: int) -> SpamMisses:
    """Spam items seen and missed per rater (docs/methods.md §3, §7; Läubli et al. 2018 §2.2 and Appendix).

    Pass only spam-item judgments, one row each: ``rater`` code,
    ``chose_spam`` (the rater preferred the nonsense candidate, i.e.
    ``choice == spam_side`` with ``spam_side`` 0 = A, 1 = B) and
    ``chose_tie`` (``choice == 2``).  Preferring the spam candidate *or* a
    tie is a miss; ties are reported apart (``missed_ties``; all of Läubli et al.'s
    misses were ties).  ``miss_rate = missed / seen`` is NaN for a rater who
    saw no spam item (not computable).  A row may not be both a spam
    preference and a tie (ValueError).
    """
    rater = g.as_codes(rater, n_raters, "rater")
    n = len(rater)
    spam = _as_mask(chose_spam, n, "chose_spam")
    tie = _as_mask(chose_tie, n, "chose_tie")
    if (spam & tie).any():
        raise ValueError("a judgment cannot both prefer the spam candidate and be a tie")
    seen = g.group_count(rater, n_raters)
    missed_spam = g.group_count(rater[spam], n_raters)
    missed_ties = g.group_count(rater[tie], n_raters)
    missed = missed_spam + missed_ties
    rate = np.full(n_raters, np.nan)
    np.divide(missed, seen, out=rate, where=seen > 0)
    return SpamMisses(seen=seen, missed=missed, missed_spam=missed_spam, missed_ties=missed_ties, miss_rate=rate)


def excluded_raters(miss_rate, max_rate: float, exclude_unassessed: bool = False) -> np.ndarray:
    """Raters to exclude on their spam miss rate (docs/methods.md §3, §7; Läubli et al. 2018 §2.3).

    ``True`` where ``miss_rate > max_rate`` (strictly: a rater exactly at the
    configured maximum stays; ``max_rate = 0`` excludes anyone with a miss).
    A NaN miss rate (no spam item seen, not computable) is kept unless
    ``exclude_unassessed`` -- there is no evidence either way.  Returns a new
    writable boolean array, ready for ``exclude = is_spam | excluded[rater]``.
    """
    if not (0.0 <= float(max_rate) <= 1.0):
        raise ValueError("max_rate must lie in [0, 1]")
    rate = g.as_scores(miss_rate, "miss_rate", allow_nan=True)
    nan = np.isnan(rate)
    out = np.zeros(rate.shape, dtype=bool)
    out[~nan] = rate[~nan] > max_rate
    if exclude_unassessed:
        out[nan] = True
    return out
