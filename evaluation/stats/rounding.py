"""Rounding to significant digits, so that equal numbers compare equal (docs/methods.md §5.2)."""

from __future__ import annotations

import numpy as np

__all__ = ["round_significant", "MAX_SIGNIFICANT_DIGITS"]

#: Largest ``digits`` accepted: a 15-digit integer mantissa is exact in a double.
MAX_SIGNIFICANT_DIGITS = 15


def _pow10(e: np.ndarray) -> np.ndarray:
    """10.0 ** e for integer arrays |e| <= 22 (exact doubles); caller keeps e in range."""
    return np.power(10.0, e.astype(np.float64))


def _scale(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """a * 10**e for integer e of any sign, in steps of at most 10**22 (no overflow)."""
    out = a.copy()
    e = e.copy()
    while True:
        todo = e != 0
        if not todo.any():
            return out
        step = np.clip(e, -22, 22)
        up = todo & (step > 0)
        down = todo & (step < 0)
        out[up] = out[up] * _pow10(step[up])
        out[down] = out[down] / _pow10(-step[down])
        e = e - step


def round_significant(x, digits: int = 12):
    """Round to ``digits`` significant decimal digits (docs/methods.md §5.2).

    Vectorised over any array shape (a scalar in gives a numpy scalar out).
    NaN and +-inf pass through unchanged; zeros stay zeros (with their sign).
    Half-way cases round to even on the scaled mantissa (``np.rint``), as
    ``np.round`` does.

    The point is **equal numbers compare equal**: per-translation means are
    sums taken in whatever order the rows arrive, so means that are
    mathematically equal (``(0.1 + 0.2) / 2`` and ``0.3 / 2``; or
    ``z(50) + z(90)`` and ``z(70) + z(70)``) can differ in the last bit, and
    a rank test would then not see the tie.  After rounding to 12
    significant digits they are bit-identical.

    Convention: each finite non-zero ``x`` is written as ``m * 10**-e`` with
    an integer mantissa ``10**(digits-1) <= |m| < 10**digits`` (``m =
    rint(|x| * 10**e)``, renormalised when rounding carries into an extra
    digit, e.g. 9.9999999999996 -> 10.0000000000), and the result is that
    decimal number converted back to a double by a fixed sequence of exact
    powers of ten (one correctly rounded division or multiplication when
    ``|e| <= 22``, i.e. for 1e-11 <= |x| < 1e34 at 12 digits).  The result
    is therefore a function of the decimal value ``m * 10**-e`` alone: two
    inputs that round to the same 12-digit decimal give the same double.
    Two inputs straddling a rounding boundary (``...5`` in the 13th digit)
    can still round apart; for inputs one bit apart that is rare (about 1 in
    20,000 in a random sample) and unavoidable for any fixed-precision
    rounding.

    ``digits`` must be an integer in 1..15 (beyond 15 digits the mantissa is
    no longer exact in a double).
    """
    digits = int(digits)
    if not 1 <= digits <= MAX_SIGNIFICANT_DIGITS:
        raise ValueError(f"digits must be in 1..{MAX_SIGNIFICANT_DIGITS}, got {digits}")
    arr = np.asarray(x, dtype=np.float64)
    out = arr.copy()
    flat_in = arr.reshape(-1)
    flat_out = out.reshape(-1)
    todo = np.isfinite(flat_in) & (flat_in != 0)
    if todo.any():
        v = flat_in[todo]
        a = np.abs(v)
        lo = 10.0 ** (digits - 1)
        hi = 10.0**digits
        # decimal exponent of the leading digit; log10 may be off by one near powers of ten
        mag = np.floor(np.log10(a)).astype(np.int64)
        e = (digits - 1) - mag
        y = _scale(a, e)
        # too few digits (log10 overshot): scale once more
        short = y < lo
        if short.any():
            e[short] += 1
            y[short] = _scale(a[short], e[short])
        m = np.rint(y)
        # too many digits (log10 undershot, or rounding carried: 999.96 -> 1000.0)
        carry = m >= hi
        if carry.any():
            e[carry] -= 1
            m[carry] = np.rint(_scale(a[carry], e[carry]))
        with np.errstate(over="ignore"):
            flat_out[todo] = np.copysign(_scale(m, -e), v)
    return out[()] if out.ndim == 0 else out
