"""Worker quality: the reliability scatter (time against test p-value) and spam-item miss rates per rater."""
from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import (
    BLUE,
    CHAR,
    GREEN,
    GRID,
    INK,
    MUTED,
    PURPLE,
    VERMILLION,
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

# Worker reliability scatter (Graham et al. 2013 Fig. 4) --------------------------------------------------------

#: The log axis of p-values stops here; smaller p-values are drawn on the floor (their titles keep the value).
LOG_FLOOR_EXPONENT = -6

WORKER_GROUPS = {
    "reliable": ("circle", BLUE, "reliable"),
    "unreliable": ("triangle", VERMILLION, "not reliable"),
}

#: Ranking gold test (METHODS §8): one group per status of the stored gold row, named as the worker table names it,
#: so the chart and the table cannot disagree on a worker.
GOLD_STATUS_GROUPS = {
    "trusted": ("circle", BLUE, "trusted"),
    "probation": ("hollow", MUTED, "probation"),
    "failed": ("triangle", VERMILLION, "failed"),
}


def scatter_chart(points: Sequence[dict], *, title: str, x_label: str, y_label: str, log_y: bool = False,
                  threshold: float | None = None, threshold_label: str = "", zone_label: str = "",
                  y_range: tuple[float, float] | None = None, groups: dict = WORKER_GROUPS,
                  good_side: str = "below", width: int = 720, height: int = 380) -> SafeString:
    """One mark per point {x, y, label, group}; `threshold` draws a dashed line with the good zone shaded on
    `good_side` of it ("below" for p-values, "above" for accuracies). `log_y` plots y on a log10 axis (values
    at or below the floor are drawn on it, their titles keep the true value). Points without x or y are left out."""
    shown = [p for p in points if _finite(p.get("x")) and _finite(p.get("y"))]
    if not shown:
        return _empty(width, height, title, "No worker has both a time and a test result yet")
    left, right, top, bottom = 70, 20, 40, 46
    ticks_x = nice_ticks(0, max(p["x"] for p in shown) or 1)
    x = Scale(ticks_x[0], ticks_x[-1], left, width - right)
    parts = []
    if log_y:
        smallest = min([p["y"] for p in shown if p["y"] > 0] + [threshold or 1, 0.01])
        floor = 10.0 ** max(LOG_FLOOR_EXPONENT, math.floor(math.log10(smallest)))
        y = Scale(floor, 1.0, height - bottom, top, log=True)
        exponents = list(range(int(round(math.log10(floor))), 1))
        ticks_y = [10.0 ** e for e in exponents[::-1]]
        labels = {t: _decade_label(t) for t in ticks_y}
        if smallest < floor:
            labels[ticks_y[-1]] = "≤ " + labels[ticks_y[-1]]

        def place(v):
            return y(max(v, floor))
    else:
        low, high = y_range or (0.0, max(max(p["y"] for p in shown), threshold or 0, 1e-9))
        ticks_y = nice_ticks(low, high)
        y = Scale(ticks_y[0], ticks_y[-1], height - bottom, top)
        labels = {t: tick_label(t, ticks_y) for t in ticks_y}
        place = y
    if threshold is not None:
        edge = place(threshold)
        zone_top, zone_bottom = (top, edge) if good_side == "above" else (edge, height - bottom)
        parts.append(format_html('<rect class="good-zone" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                                 'fill-opacity=".07"/>', _c(left), _c(zone_top), _c(width - right - left),
                                 _c(zone_bottom - zone_top), GREEN))
    for t in ticks_y:
        parts.append(_line(left, place(t), width - right, place(t), GRID))
        parts.append(_text(left - 6, place(t) + 4, labels[t], "end", MUTED))
    for t in ticks_x:
        parts.append(_line(x(t), height - bottom, x(t), height - bottom + 4))
        parts.append(_text(x(t), height - bottom + 17, tick_label(t, ticks_x), "middle", MUTED))
    parts.append(_line(left, height - bottom, width - right, height - bottom))
    parts.append(_line(left, top, left, height - bottom))
    parts.append(_text((left + width - right) / 2, height - 8, x_label, "middle", INK))
    parts.append(_text(14, (top + height - bottom) / 2, y_label, "middle", INK,
                       extra=f' transform="rotate(-90 14 {_c((top + height - bottom) / 2)})"'))
    if threshold is not None:
        ty = place(threshold)
        parts.append(format_html('<g class="threshold">{}</g>', _line(left, ty, width - right, ty, VERMILLION, 1.5,
                                                                     "6 4")))
        parts.append(_text(width - right - 4, ty - 5, threshold_label, "end", VERMILLION, weight="600"))
        zone_y = ty - 20 if good_side == "above" else ty + 15
        if zone_label:
            parts.append(_text(width - right - 4, zone_y, zone_label, "end", GREEN, weight="600"))
    # Unreliable marks first so the reliable ones stay on top where they crowd near the floor.
    for point in sorted(shown, key=lambda p: p.get("group") in ("reliable", "trusted")):
        shape, colour, _ = groups.get(point.get("group"), ("square", PURPLE, "other"))
        parts.append(_marker(shape, x(point["x"]), place(point["y"]), colour, point.get("label", "")))
    legend = [(shape, colour, name) for key, (shape, colour, name) in groups.items()
              if any(p.get("group") == key for p in shown)]
    parts.append(_legend(left, 16, legend))
    return _svg(width, height, title, _join(parts))


def _decade_label(value: float) -> str:
    exponent = round(math.log10(value))
    return "1" if exponent == 0 else f"{value:g}" if exponent >= -3 else f"1e{exponent}".replace("-", "−")


# Spam-item miss rates per rater (Läubli et al. 2018 §2.3) ----------------------------------------------------

def rate_bars(rows: Sequence[dict], *, title: str, threshold: float, width: int = 720) -> SafeString:
    """One horizontal bar per rater {label, rate, seen, missed, excluded}: the share of spam items missed,
    with the exclusion threshold as a dashed line. Raters without spam items are left out."""
    shown = [r for r in rows if _finite(r.get("rate"))]
    if not shown:
        return _empty(width, 90, title, "No rater has seen a spam item yet")
    label_chars = min(max(len(str(r["label"])) for r in shown) + 2, 28)
    left, right, top, bar_h, gap = 12 + label_chars * CHAR, 130, 34, 18, 8
    height = top + len(shown) * (bar_h + gap) + 34
    x = Scale(0, 1, left, width - right)
    parts = [_legend(left, 16, [("swatch", BLUE, "counted"), ("swatch", VERMILLION, "excluded"),
                                ("dash", VERMILLION, f"exclusion above {threshold:.0%}")])]
    for t in (0, .2, .4, .6, .8, 1):
        parts.append(_line(x(t), top - 4, x(t), height - 30, GRID))
        parts.append(_text(x(t), height - 14, f"{t:.0%}", "middle", MUTED))
    for i, row in enumerate(shown):
        y0 = top + i * (bar_h + gap)
        colour = VERMILLION if row.get("excluded") else BLUE
        parts.append(_text(left - 8, y0 + bar_h / 2 + 4, truncate(row["label"], label_chars), "end", INK))
        tip = (f"{row['label']}: missed {row['missed']} of {row['seen']} spam items ({row['rate']:.0%}), "
               f"{'excluded' if row.get('excluded') else 'counted'}")
        parts.append(format_html('<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}">'
                                 "<title>{}</title></rect>", _c(left), _c(y0), _c(max(x(row["rate"]) - left, 1.5)),
                                 bar_h, colour, tip))
        parts.append(_text(x(row["rate"]) + 6, y0 + bar_h / 2 + 4, f"{row['missed']} of {row['seen']}", fill=MUTED,
                           size=11))
    parts.append(_line(x(threshold), top - 8, x(threshold), height - 30, VERMILLION, 1.5, "6 4"))
    return _svg(width, height, title, _join(parts))
