"""Server-drawn SVG charts for the results pages: pure functions from numbers and labels to markup.

Nothing here touches the database. Every label goes through `format_html`, so names typed by
users (campaigns, systems, worker ids) reach the page escaped; numbers are formatted here.
Each mark carries a `<title>` for hover. Colours are Okabe & Ito's colour-blind-safe palette,
and series differ by shape or position as well as colour.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from .stats.systems import SIGNIFICANCE_LEVELS
from .stats.systems import stars as significance_stars

BLUE = "#0072B2"
ORANGE = "#E69F00"
VERMILLION = "#D55E00"
GREEN = "#009E73"
SKY = "#56B4E9"
PURPLE = "#CC79A7"
TIE_GREY = "#BDBDBD"
INK = "#222222"
MUTED = "#666666"
GRID = "#E6E6E6"
AXIS = "#888888"
FONT = 12
CHAR = 6.7  # average glyph width at FONT px, for laying out labels

#: Heatmap bins: (upper p bound, fill, text colour, legend label), one per significance level of the
#: statistics core and one for the rest. A single-hue sequential scale.
P_BINS = tuple(
    (level, fill, ink, f"p < {level:g} {mark}")
    for (level, mark), (fill, ink) in zip(SIGNIFICANCE_LEVELS, (("#08306B", "#FFFFFF"), ("#2171B5", "#FFFFFF"),
                                                             ("#9ECAE1", INK)), strict=True)
) + ((math.inf, "#F7FBFF", MUTED, "not significant"),)


def _join(parts: Iterable[SafeString]) -> SafeString:
    """Concatenate markup pieces that were each built with format_html (so already escaped)."""
    return mark_safe("".join(parts))  # noqa: S308 - every part is a SafeString from format_html


def _c(value: float) -> str:
    """A coordinate."""
    return f"{value:.1f}"


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def stars(p) -> str:
    """The papers' significance mark for one p-value ('***', '**', '*' or ''): the statistics core's `stars`."""
    return str(significance_stars(p if _finite(p) else None))


def format_p(p) -> str:
    """A p-value for reading: '0.244', '0.0123', '3.2e-05'; '–' when there is none."""
    if not _finite(p):
        return "–"
    if p < 0.001:
        return "0" if p == 0 else f"{p:.1e}"
    return f"{p:.3f}" if p >= 0.01 else f"{p:.4f}"


def truncate(label: str, chars: int) -> str:
    label = str(label)
    return label if len(label) <= chars else label[: max(chars - 1, 1)] + "…"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (the first ≤ low, the last ≥ high)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    start = math.floor(low / step + 1e-9) * step
    ticks = [start]
    while ticks[-1] < high - step * 1e-9:
        ticks.append(start + len(ticks) * step)
    return [round(t, 10) for t in ticks]


def tick_label(value: float, ticks: Sequence[float]) -> str:
    """A tick's text with as many decimals as the tick step needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = next((d for d in range(7) if abs(step * 10 ** d - round(step * 10 ** d)) < 1e-6), 6)
    text = f"{value:.{decimals}f}"
    return "0" if text.strip("-0.") == "" else text.replace("-", "−")


class Scale:
    """Linear or log10 map from a data domain to a pixel range."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool = False):
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        span = (self.high - self.low) or 1.0
        return self.start + (v - self.low) / span * (self.end - self.start)


def _svg(width: float, height: float, title: str, body: SafeString, css_class: str = "chart") -> SafeString:
    return format_html(
        '<svg class="{}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
        'aria-label="{}" font-size="{}" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif">'
        "<title>{}</title>{}</svg>",
        css_class, _c(width), _c(height), _c(width), _c(height), title, FONT, title, body)


def _text(x: float, y: float, text: str, anchor: str = "start", fill: str = INK, size: int | None = None,
          weight: str = "normal", extra: str = "") -> SafeString:
    return format_html('<text x="{}" y="{}" text-anchor="{}" fill="{}" font-size="{}" font-weight="{}"{}>{}</text>',
                       _c(x), _c(y), anchor, fill, size or FONT, weight, mark_safe(extra), text)


def _line(x1, y1, x2, y2, stroke=AXIS, width=1.0, dash: str = "") -> SafeString:
    return format_html('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"{}/>',
                       _c(x1), _c(y1), _c(x2), _c(y2), stroke, width,
                       format_html(' stroke-dasharray="{}"', dash) if dash else "")


def _marker(shape: str, x: float, y: float, colour: str, title: str, size: float = 4.5) -> SafeString:
    """A data mark with its hover title: filled circle, hollow triangle, hollow square or diamond."""
    tip = format_html("<title>{}</title>", title)
    if shape == "triangle":
        points = " ".join(f"{_c(px)},{_c(py)}" for px, py in ((x, y - size * 1.2), (x - size * 1.1, y + size * .8),
                                                                (x + size * 1.1, y + size * .8)))
        return format_html('<polygon class="mark" points="{}" fill="#FFFFFF" fill-opacity=".6" stroke="{}" '
                           'stroke-width="1.6">{}</polygon>', points, colour, tip)
    if shape == "square":
        return format_html('<rect class="mark" x="{}" y="{}" width="{}" height="{}" fill="#FFFFFF" stroke="{}" '
                           'stroke-width="1.6">{}</rect>', _c(x - size), _c(y - size), _c(2 * size), _c(2 * size),
                           colour, tip)
    if shape == "hollow":
        return format_html('<circle class="mark" cx="{}" cy="{}" r="{}" fill="#FFFFFF" stroke="{}" '
                           'stroke-width="1.8">{}</circle>', _c(x), _c(y), _c(size), colour, tip)
    return format_html('<circle class="mark" cx="{}" cy="{}" r="{}" fill="{}" fill-opacity=".8" stroke="#FFFFFF" '
                       'stroke-width=".8">{}</circle>', _c(x), _c(y), _c(size), colour, tip)


def _legend(x: float, y: float, entries: Sequence[tuple[str, str, str]]) -> SafeString:
    """A row of (shape or 'swatch', colour, label) entries from (x, y)."""
    parts = []
    for shape, colour, label in entries:
        if shape == "swatch":
            parts.append(format_html('<rect x="{}" y="{}" width="12" height="12" fill="{}" stroke="#FFFFFF"/>',
                                     _c(x), _c(y - 9), colour))
        elif shape == "dash":
            parts.append(_line(x, y - 3, x + 14, y - 3, colour, 1.5, "5 3"))
        else:
            parts.append(_marker(shape, x + 6, y - 3, colour, label, 4))
        parts.append(_text(x + 18, y + 1, label, fill=INK))
        x += 30 + len(label) * CHAR
    return _join(parts)


def _empty(width: float, height: float, title: str, message: str) -> SafeString:
    height = min(height, 90)
    body = _join([format_html('<rect x="0" y="0" width="{}" height="{}" fill="#FAFAFA" stroke="{}"/>',
                              _c(width), _c(height), GRID),
                  _text(width / 2, height / 2, message, "middle", MUTED)])
    return _svg(width, height, title, body)


# Progress over time ---------------------------------------------------------------------------

_TIME_STEPS = [timedelta(hours=h) for h in (1, 2, 3, 6, 12)] + [timedelta(days=d) for d in (1, 2, 7, 14, 30, 91)]


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def time_ticks(first: datetime, last: datetime, count: int = 5) -> list[datetime]:
    span = max((last - first).total_seconds(), 3600.0)
    step = next((s for s in _TIME_STEPS if s.total_seconds() * count >= span), _TIME_STEPS[-1])
    origin = datetime(2000, 1, 3, tzinfo=UTC)  # a Monday, so weekly ticks fall on Mondays
    n = math.ceil((first - origin) / step)
    ticks, moment = [], origin + n * step
    while moment <= last:
        ticks.append(moment)
        moment += step
    return ticks


def line_chart(times: Sequence[str], values: Sequence[float], *, title: str, y_label: str, colour: str = BLUE,
               width: int = 440, height: int = 230, bucket: str = "hour") -> SafeString:
    """Cumulative counts over time: one line with a dot per time bucket (ISO times, UTC)."""
    if not times:
        return _empty(width, height, title, "No judgments yet")
    moments = [_parse_time(t) for t in times]
    first, last = moments[0], moments[-1]
    pad = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    if first == last:
        first, last = first - pad, last + pad
    left, right, top, bottom = 62, 16, 28, 42
    ticks_y = nice_ticks(0, max(max(values), 1))
    x = Scale(first.timestamp(), last.timestamp(), left, width - right)
    y = Scale(ticks_y[0], ticks_y[-1], height - bottom, top)
    parts = [_text(left - 52, 14, y_label, fill=MUTED, weight="600")]
    for t in ticks_y:
        parts.append(_line(left, y(t), width - right, y(t), GRID))
        parts.append(_text(left - 6, y(t) + 4, _count_label(t), "end", MUTED))
    daily = (last - first) > timedelta(days=2)
    for moment in time_ticks(first, last, 4):
        parts.append(_line(x(moment.timestamp()), height - bottom, x(moment.timestamp()), height - bottom + 4))
        label = moment.strftime("%d %b") if daily or moment.hour == 0 else moment.strftime("%H:%M")
        parts.append(_text(x(moment.timestamp()), height - bottom + 17, label, "middle", MUTED))
    parts.append(_line(left, height - bottom, width - right, height - bottom, AXIS))
    parts.append(_text((left + width - right) / 2, height - 6, f"time (UTC, per {bucket})", "middle", MUTED))
    points = " ".join(f"{_c(x(m.timestamp()))},{_c(y(v))}" for m, v in zip(moments, values, strict=True))
    parts.append(format_html('<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>', points, colour))
    radius = 3 if len(moments) <= 80 else 1.6
    for moment, value in zip(moments, values, strict=True):
        parts.append(_marker("circle", x(moment.timestamp()), y(value), colour,
                             f"{moment:%Y-%m-%d %H:%M} UTC: {value:,} {y_label.lower()}", radius))
    return _svg(width, height, title, _join(parts))


def _count_label(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


# Worker reliability scatter (001 Fig. 4) --------------------------------------------------------

#: The log axis of p-values stops here; smaller p-values are drawn on the floor (their titles keep the value).
LOG_FLOOR_EXPONENT = -6

WORKER_GROUPS = {
    "reliable": ("circle", BLUE, "reliable"),
    "unreliable": ("triangle", VERMILLION, "not reliable"),
}


def scatter_chart(points: Sequence[dict], *, title: str, x_label: str, y_label: str, log_y: bool = False,
                  threshold: float | None = None, threshold_label: str = "", zone_label: str = "",
                  y_range: tuple[float, float] | None = None, groups: dict = WORKER_GROUPS,
                  width: int = 720, height: int = 380) -> SafeString:
    """One mark per point {x, y, label, group}; `threshold` draws a dashed line with the zone below it
    shaded (the reliable side). `log_y` plots y on a log10 axis (values at or below the floor are
    drawn on it, their titles keep the true value). Points without x or y are left out."""
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
        zone_top = place(threshold)
        parts.append(format_html('<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity=".07"/>',
                                 _c(left), _c(zone_top), _c(width - right - left), _c(height - bottom - zone_top),
                                 GREEN))
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
        parts.append(_line(left, ty, width - right, ty, VERMILLION, 1.5, "6 4"))
        parts.append(_text(width - right - 4, ty - 5, threshold_label, "end", VERMILLION, weight="600"))
        if zone_label:
            parts.append(_text(width - right - 4, ty + 15, zone_label, "end", GREEN, weight="600"))
    # Unreliable marks first so the reliable ones stay on top where they crowd near the floor.
    for point in sorted(shown, key=lambda p: p.get("group") == "reliable"):
        shape, colour, _ = groups.get(point.get("group"), ("square", PURPLE, "other"))
        parts.append(_marker(shape, x(point["x"]), place(point["y"]), colour, point.get("label", "")))
    legend = [(shape, colour, name) for key, (shape, colour, name) in groups.items()
              if any(p.get("group") == key for p in shown)]
    parts.append(_legend(left, 16, legend))
    return _svg(width, height, title, _join(parts))


def _decade_label(value: float) -> str:
    exponent = round(math.log10(value))
    return "1" if exponent == 0 else f"{value:g}" if exponent >= -3 else f"1e{exponent}".replace("-", "−")


# System rankings with intervals (001 Table 5) ---------------------------------------------------

def ranking_chart(rows: Sequence[dict], *, title: str,
                  panels: Sequence[tuple[str, str]] = (("z", "z score"), ("raw", "raw score (0–100)")),
                  width: int = 540, domains: dict | None = None) -> SafeString:
    """Rows in rank order: {label, cluster, is_reference, z: (mean, low, high), raw: (...)}; one panel per
    scale with a dot at the mean and a bar over the interval. Alternate clusters are shaded and a line
    separates them. `domains` fixes a panel's (low, high) so two charts can share axes."""
    if not rows:
        return _empty(width, 90, title, "No system scores")
    row_h, top, bottom = 26, 30, 38
    label_chars = min(max(len(str(r["label"])) for r in rows) + 4, 26)
    left = 14 + label_chars * CHAR
    gap = 18
    panel_w = (width - left - 10 - gap * (len(panels) - 1)) / len(panels)
    height = top + row_h * len(rows) + bottom
    parts = []
    clusters = [r.get("cluster") for r in rows]
    shade = False
    for i in range(len(rows)):
        if i and clusters[i] != clusters[i - 1]:
            shade = not shade
        if shade:
            parts.append(format_html('<rect x="0" y="{}" width="{}" height="{}" fill="#F2F2F2"/>',
                                     _c(top + i * row_h), _c(width), row_h))
    for i in range(1, len(rows)):
        if clusters[i] != clusters[i - 1]:
            parts.append(_line(0, top + i * row_h, width, top + i * row_h, MUTED, 1.2, "4 3"))
    for i, row in enumerate(rows):
        cy = top + i * row_h + row_h / 2
        label = truncate(row["label"], label_chars)
        style = ' font-style="italic"' if row.get("is_reference") else ""
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end" fill="{}"{}>{}<title>{}</title></text>',
                                 _c(left - 8), _c(cy + 4), INK, mark_safe(style), label, row["label"]))
    for k, (key, axis_label) in enumerate(panels):
        x0 = left + k * (panel_w + gap)
        values = [v for r in rows for v in (r[key] or ()) if _finite(v)]
        low, high = (domains or {}).get(key) or ((min(values), max(values)) if values else (0.0, 1.0))
        if key == "z":
            low, high = min(low, 0.0), max(high, 0.0)
        ticks = nice_ticks(low, high, 4)
        x = Scale(ticks[0], ticks[-1], x0 + 6, x0 + panel_w - 6)
        for t in ticks:
            parts.append(_line(x(t), top, x(t), height - bottom, "#000000" if key == "z" and t == 0 else GRID,
                               1.0 if key == "z" and t == 0 else 1.0))
            parts.append(_text(x(t), height - bottom + 15, tick_label(t, ticks), "middle", MUTED))
        parts.append(_line(x0, height - bottom, x0 + panel_w, height - bottom))
        parts.append(_text(x0 + panel_w / 2, 16, axis_label, "middle", INK, weight="600"))
        for i, row in enumerate(rows):
            mean, lo, hi = (tuple(row[key]) + (None, None, None))[:3] if row[key] else (None, None, None)
            cy = top + i * row_h + row_h / 2
            colour = PURPLE if row.get("is_reference") else BLUE
            interval = f"[{lo:.3f}, {hi:.3f}]" if _finite(lo) and _finite(hi) else "(no interval)"
            tip = f"{row['label']}: {key} {mean:.3f} {interval}" if _finite(mean) else f"{row['label']}: no {key}"
            if _finite(lo) and _finite(hi):
                parts.append(_line(x(lo), cy, x(hi), cy, colour, 2))
                parts.append(_line(x(lo), cy - 4, x(lo), cy + 4, colour, 1.5))
                parts.append(_line(x(hi), cy - 4, x(hi), cy + 4, colour, 1.5))
            if _finite(mean):
                parts.append(_marker("hollow" if row.get("is_reference") else "circle", x(mean), cy, colour, tip,
                                     4.5))
    return _svg(width, height, title, _join(parts))


# Significance heatmap ---------------------------------------------------------------------------

def p_bin(p) -> tuple[str, str, str]:
    """(fill, text colour, legend label) of a p-value's bin."""
    for bound, fill, ink, label in P_BINS:
        if _finite(p) and p < bound:
            return fill, ink, label
    return "#E0E0E0", MUTED, "no test"


def heatmap(systems: Sequence[str], p_values: Sequence[Sequence], *, title: str, width: int = 520) -> SafeString:
    """Rows: system i; columns: system j (by rank number); cell: one-sided p that i is better than j,
    coloured by significance level with the papers' stars."""
    n = len(systems)
    if n == 0:
        return _empty(width, 90, title, "No systems")
    label_chars = min(max(len(str(s)) for s in systems) + 4, 24)
    left = 10 + label_chars * CHAR
    cell = max(16.0, min(40.0, (width - left - 10) / n))
    top = 44
    grid_w = cell * n
    width = max(width, left + grid_w + 10)
    height = top + grid_w + 48
    parts = [_text(left + grid_w / 2, 14, "… is better than system (by rank)", "middle", MUTED)]
    for j in range(n):
        parts.append(format_html('<text x="{}" y="{}" text-anchor="middle" fill="{}">{}<title>{}</title></text>',
                                 _c(left + j * cell + cell / 2), _c(top - 8), MUTED, j + 1, systems[j]))
    for i, name in enumerate(systems):
        cy = top + i * cell
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end" fill="{}">{}<title>{}</title></text>',
                                 _c(left - 6), _c(cy + cell / 2 + 4), INK, truncate(f"{i + 1}. {name}", label_chars),
                                 name))
        for j, other in enumerate(systems):
            p = p_values[i][j] if i < len(p_values) and j < len(p_values[i]) else None
            if i == j:
                fill, ink, tip = "#FFFFFF", MUTED, f"{name} (itself)"
            else:
                fill, ink, _ = p_bin(p)
                tip = f"{name} better than {other}: p = {format_p(p)} {stars(p)}".rstrip()
            parts.append(format_html(
                '<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#FFFFFF" '
                'stroke-width="1"><title>{}</title></rect>',
                _c(left + j * cell), _c(cy), _c(cell), _c(cell), fill, tip))
            if i == j:
                parts.append(_line(left + j * cell + 3, cy + 3, left + (j + 1) * cell - 3, cy + cell - 3, GRID))
            elif stars(p) and cell >= 18:
                parts.append(_text(left + j * cell + cell / 2, cy + cell / 2 + 4, stars(p), "middle", ink,
                                   size=11 if cell < 26 else FONT, weight="700",
                                   extra=' pointer-events="none"'))
    parts.append(format_html('<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}"/>',
                             _c(left), _c(top), _c(grid_w), _c(grid_w), GRID))
    legend_y = top + grid_w + 28
    x = 10.0
    for _, fill, _, label in P_BINS:
        parts.append(format_html('<rect x="{}" y="{}" width="14" height="14" fill="{}" stroke="#BBBBBB"/>',
                                 _c(x), _c(legend_y - 11), fill))
        parts.append(_text(x + 19, legend_y, label, fill=INK, size=11))
        x += 34 + len(label) * 6.2
    return _svg(width, height, title, _join(parts))


# Pairwise preference bars (003 Fig. 1) ----------------------------------------------------------

def preference_bars(rows: Sequence[dict], *, first: str, second: str, title: str, width: int = 760) -> SafeString:
    """One 100 % bar per condition {label, a, t, b, x, n, p}: first system preferred | tie | second
    preferred, with the sign test beside it."""
    if not rows:
        return _empty(width, 90, title, "No pairwise judgments")
    label_chars = min(max(len(str(r["label"])) for r in rows) + 2, 24)
    left, right_text = 12 + label_chars * CHAR, 210
    bar_w = width - left - right_text - 10
    top, bar_h, gap = 44, 30, 16
    height = top + len(rows) * (bar_h + gap) + 30
    x = Scale(0, 100, left, left + bar_w)
    colours = ((BLUE, "#FFFFFF"), (TIE_GREY, INK), (ORANGE, INK))
    parts = [_legend(left, 18, [("swatch", BLUE, f"{first} preferred"), ("swatch", TIE_GREY, "tie"),
                                ("swatch", ORANGE, f"{second} preferred")])]
    for t in range(0, 101, 20):
        parts.append(_line(x(t), top - 6, x(t), height - 30, GRID))
        parts.append(_text(x(t), height - 14, f"{t} %", "middle", MUTED))
    for i, row in enumerate(rows):
        y0 = top + i * (bar_h + gap)
        total = row["a"] + row["t"] + row["b"]
        parts.append(_text(left - 8, y0 + bar_h / 2 - 2, truncate(row["label"], label_chars), "end", INK,
                           weight="600"))
        parts.append(_text(left - 8, y0 + bar_h / 2 + 12, f"N = {total}", "end", MUTED, size=11))
        start = 0.0
        for (count, name), (fill, ink) in zip(((row["a"], f"{first} preferred"), (row["t"], "tie"),
                                               (row["b"], f"{second} preferred")), colours, strict=True):
            share = 100.0 * count / total if total else 0.0
            if share > 0:
                parts.append(format_html(
                    '<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#FFFFFF">'
                    "<title>{}: {} {} of {} ({} %)</title></rect>",
                    _c(x(start)), _c(y0), _c(x(start + share) - x(start)), bar_h, fill, row["label"], name, count,
                    total, f"{share:.1f}"))
                if x(start + share) - x(start) >= 30:
                    parts.append(_text((x(start) + x(start + share)) / 2, y0 + bar_h / 2 + 4, f"{share:.0f}",
                                       "middle", ink, weight="600", extra=' pointer-events="none"'))
            start += share
        p = row.get("p")
        test = f"x = {_num(row.get('x'))}, n = {_num(row.get('n'))}"
        parts.append(_text(left + bar_w + 10, y0 + bar_h / 2 - 2, test, fill=INK))
        parts.append(_text(left + bar_w + 10, y0 + bar_h / 2 + 13, f"p = {format_p(p)} {stars(p)}".rstrip(),
                           fill=INK if stars(p) else MUTED, weight="700" if stars(p) else "normal"))
    return _svg(width, height, title, _join(parts))


def _num(value) -> str:
    if not _finite(value):
        return "–"
    return f"{value:g}"


# Spam-item miss rates per rater (003 §2.3) ----------------------------------------------------

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


# Calibration (000 Table 3) ----------------------------------------------------------------------

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
