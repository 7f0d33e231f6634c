"""Calibration (Graham et al. 2014 Table 3): each system's mean on the old and the new test set, joined by an arrow."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import (
    BLUE,
    CHAR,
    GRID,
    INK,
    MUTED,
    Scale,
    _c,
    _empty,
    _finite,
    _join,
    _legend,
    _line,
    _marker,
    _svg,
    _text,
    nice_ticks,
    tick_label,
    truncate,
)


def change_chart(rows: Sequence[dict], *, title: str, x_label: str, width: int = 640) -> SafeString:
    """One row per system {label, old, new, old_label, new_label}: an arrow from the old to the new mean."""
    values = [v for r in rows for v in (r["old"], r["new"]) if _finite(v)]
    if not values:
        return _empty(width, 90, title, "Nothing to compare")
    label_chars = min(max(len(str(r["label"])) for r in rows) + 2, 34)
    left, right, top, row_h, bottom = 14 + label_chars * CHAR, 24, 30, 40, 40
    height = top + row_h * len(rows) + bottom
    ticks = nice_ticks(min(values), max(values), 5)
    x = Scale(ticks[0], ticks[-1], left, width - right)
    parts = [_legend(left, 16, [("hollow", MUTED, "old test set"), ("circle", BLUE, "new test set")])]
    for t in ticks:
        parts.append(_line(x(t), top, x(t), height - bottom, GRID))
        parts.append(_text(x(t), height - bottom + 15, tick_label(t, ticks), "middle", MUTED))
    parts.append(_text((left + width - right) / 2, height - 6, x_label, "middle", INK))
    for i, row in enumerate(rows):
        cy = top + i * row_h + row_h / 2
        parts.append(_text(left - 8, cy + 4, truncate(row["label"], label_chars), "end", INK))
        old, new = row["old"], row["new"]
        if _finite(old) and _finite(new):
            parts.append(_line(x(old), cy, x(new), cy, MUTED, 1.5))
            direction = 1 if new >= old else -1
            if abs(x(new) - x(old)) > 10:
                tip_x = x(new) - direction * 5
                parts.append(format_html('<polygon points="{},{} {},{} {},{}" fill="{}"/>',
                                         _c(tip_x), _c(cy), _c(tip_x - direction * 7), _c(cy - 4),
                                         _c(tip_x - direction * 7), _c(cy + 4), MUTED))
        if _finite(old):
            parts.append(_marker("hollow", x(old), cy, MUTED, f"{row['label']}, {row['old_label']}: {old:.3f}"))
        if _finite(new):
            parts.append(_marker("circle", x(new), cy, BLUE, f"{row['label']}, {row['new_label']}: {new:.3f}"))
        if _finite(old) and _finite(new):
            parts.append(_text((x(old) + x(new)) / 2, cy - 8, f"{new - old:+.2f}".replace("-", "−"), "middle",
                               MUTED, size=11))
    return _svg(width, height, title, _join(parts))
