"""Numbers as the results pages print them: fixed decimals, intervals, signs, with a real minus sign."""
from __future__ import annotations

import math


def finite(value) -> float | None:
    """The value if it is a finite number, else None."""
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def fixed(value, decimals: int = 3) -> str:
    value = finite(value)
    return "–" if value is None else f"{value:.{decimals}f}".replace("-", "−")


def signed(value, decimals: int) -> str:
    value = finite(value)
    return "–" if value is None else f"{value:+.{decimals}f}".replace("-", "−")


def interval(low, high, decimals: int) -> str:
    if finite(low) is None or finite(high) is None:
        return "–"
    return f"[{fixed(low, decimals)}, {fixed(high, decimals)}]"


def percent(value, decimals: int = 0) -> str:
    value = finite(value)
    return "–" if value is None else f"{value:.{decimals}%}"
