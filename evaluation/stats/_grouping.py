"""Vectorised group-by primitives over integer codes (internal).

Everything here works on a ``codes`` array of integers in ``[0, n)`` that
assigns each row to a group (a worker, a system, a translation ...) and a
float ``values`` array of the same length.  Group statistics are computed
with ``np.bincount`` (sums, counts), ``ufunc.at`` (minimum / maximum) and one
stable ``argsort`` (splitting into per-group arrays) -- never with a Python
loop over rows.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_codes",
    "as_scores",
    "check_same_length",
    "group_count",
    "group_sum",
    "group_mean",
    "group_mean_canonical",
    "group_mean_sd",
    "group_all_equal",
    "group_split",
    "factorize",
    "freeze",
    "pairs_within_groups",
]


def as_codes(codes, n: int, name: str) -> np.ndarray:
    """Validate integer group codes in ``[0, n)`` and return them as int64."""
    a = np.asarray(codes)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if n < 0:
        raise ValueError(f"number of groups for {name} must be >= 0, got {n}")
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not (np.issubdtype(a.dtype, np.integer) and a.dtype != np.bool_):
        raise TypeError(f"{name} must be an integer array (codes 0..{n - 1}), got {a.dtype}")
    a = a.astype(np.int64, copy=False)
    lo, hi = int(a.min()), int(a.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{name} codes must lie in [0, {n}), found [{lo}, {hi}]")
    return a


def as_scores(values, name: str, allow_nan: bool = False) -> np.ndarray:
    """Validate a one-dimensional float array (finite unless ``allow_nan``)."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if allow_nan:
        if np.isinf(a).any():
            raise ValueError(f"{name} must not contain infinite values")
    elif a.size and not np.isfinite(a).all():
        raise ValueError(f"{name} must contain finite numbers only")
    return a


def check_same_length(**arrays) -> int:
    """Raise ValueError unless all arrays have the same length; return it."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(f"arrays must have equal length ({detail})")
    return next(iter(lengths.values()), 0)


def group_count(codes: np.ndarray, n: int) -> np.ndarray:
    """Number of rows per group (int64, length ``n``)."""
    return np.bincount(codes, minlength=n).astype(np.int64, copy=False)


def group_sum(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sum of ``values`` per group (0.0 for empty groups)."""
    return np.bincount(codes, weights=values, minlength=n)


def _safe_divide(num: np.ndarray, den: np.ndarray, where: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=where)
    return out


def group_mean(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Mean of ``values`` per group; NaN for empty groups."""
    count = group_count(codes, n)
    return _safe_divide(group_sum(codes, values, n), count, count > 0)


def group_mean_canonical(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Mean of ``values`` per group, each group summed in ascending order of its values (NaN if empty).

    ``np.bincount`` adds in row order, so the same multiset of values arriving in another order can
    give another last bit; summed sorted, it always gives the same bits (docs/methods.md §5)."""
    order = np.lexsort((values, codes))
    return group_mean(codes[order], values[order], n)


def group_mean_sd(codes: np.ndarray, values: np.ndarray, n: int, ddof: int = 1):
    """Count, mean and standard deviation per group (two-pass, numerically stable).

    ``sd`` uses ``ddof`` (1 = sample sd, R's ``sd()``); it is NaN where the
    group has ``count <= ddof`` rows, ``mean`` is NaN for empty groups.
    """
    count = group_count(codes, n)
    mean = _safe_divide(group_sum(codes, values, n), count, count > 0)
    if codes.size:
        dev = values - mean[codes]
        ss = group_sum(codes, dev * dev, n)
    else:
        ss = np.zeros(n)
    var = _safe_divide(ss, (count - ddof).astype(np.float64), count > ddof)
    return count, mean, np.sqrt(var)


def group_all_equal(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """True where a non-empty group's values are all exactly equal (min == max).

    Exact comparison, so a group of identical differences is recognised as
    constant even when floating-point summation would leave a tiny non-zero
    variance.  Empty groups give False.
    """
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, codes, values)
    np.maximum.at(hi, codes, values)
    return lo == hi


def group_split(codes: np.ndarray, values: np.ndarray, n: int) -> list[np.ndarray]:
    """Split ``values`` into ``n`` arrays, one per group, keeping row order."""
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(group_count(codes, n))[:-1]
    return np.split(values[order], bounds)


def factorize(key: np.ndarray, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes for the distinct values of a non-negative int64 ``key``.

    Returns ``(uniques, inverse)`` with ``uniques`` sorted ascending and
    ``uniques[inverse] == key``.  Uses a bincount table when the key space
    (``n_max``) is small, else ``np.unique``; both give the same answer.
    """
    if key.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if n_max <= max(1 << 22, 4 * key.size):
        present = np.bincount(key, minlength=n_max) > 0
        uniques = np.flatnonzero(present).astype(np.int64)
        remap = np.zeros(n_max, dtype=np.int64)
        remap[uniques] = np.arange(uniques.size, dtype=np.int64)
        return uniques, remap[key]
    uniques, inverse = np.unique(key, return_inverse=True)
    return uniques.astype(np.int64), inverse.astype(np.int64).reshape(-1)


def freeze(obj) -> None:
    """Make every ndarray attribute of a dataclass instance read-only."""
    for value in vars(obj).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False


def pairs_within_groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs ``(i, j)``, ``i < j``, of rows with equal ``key`` (``key`` sorted), by index arithmetic."""
    n = key.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    is_start = np.r_[True, key[1:] != key[:-1]]
    starts = np.flatnonzero(is_start)
    ends = np.r_[starts[1:], n]
    group = np.cumsum(is_start) - 1
    n_later = ends[group] - np.arange(n) - 1
    total = int(n_later.sum())
    first = np.repeat(np.arange(n, dtype=np.int64), n_later)
    block_start = np.repeat(np.cumsum(n_later) - n_later, n_later)
    second = first + 1 + (np.arange(total, dtype=np.int64) - block_start)
    return first, second
