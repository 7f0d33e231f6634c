"""How systems compare: rankings with intervals, the significance heatmap, pairwise preference bars."""
from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from ..stats.systems import SIGNIFICANCE_LEVELS
from .svg import (
    BLUE,
    CHAR,
    FONT,
    GRID,
    INK,
    MUTED,
    ORANGE,
    PURPLE,
    TIE_GREY,
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
    format_p,
    nice_ticks,
    stars,
    tick_label,
    truncate,
)

#: Heatmap bins: (upper p bound, fill, text colour, legend label), one per significance level of the
#: statistics core and one for the rest. A single-hue sequential scale.
P_BINS = tuple(
    (level, fill, ink, f"p < {level:g} {mark}")
    for (level, mark), (fill, ink) in zip(SIGNIFICANCE_LEVELS, (("#08306B", "#FFFFFF"), ("#2171B5", "#FFFFFF"),
                                                             ("#9ECAE1", INK)), strict=True)
) + ((math.inf, "#F7FBFF", MUTED, "not significant"),)


# System rankings with intervals (Graham et al. 2013 Table 5) ---------------------------------------------------

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

def _grid_frame(systems: Sequence[str], width: int, cell_range: tuple[float, float], caption: str):
    """The frame of a system × system grid: the caption, the column numbers and the row labels ("1. name").
    Returns (left, top, cell, grid width, chart width, parts)."""
    n = len(systems)
    label_chars = min(max(len(str(s)) for s in systems) + 4, 24)
    left = 10 + label_chars * CHAR
    cell = max(cell_range[0], min(cell_range[1], (width - left - 10) / n))
    top, grid_w = 44, cell * n
    width = max(width, left + grid_w + 10)
    parts = [_text(left + grid_w / 2, 14, caption, "middle", MUTED)]
    for j in range(n):
        parts.append(format_html('<text x="{}" y="{}" text-anchor="middle" fill="{}">{}<title>{}</title></text>',
                                 _c(left + j * cell + cell / 2), _c(top - 8), MUTED, j + 1, systems[j]))
    for i, name in enumerate(systems):
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end" fill="{}">{}<title>{}</title></text>',
                                 _c(left - 6), _c(top + i * cell + cell / 2 + 4), INK,
                                 truncate(f"{i + 1}. {name}", label_chars), name))
    return left, top, cell, grid_w, width, parts


def p_bin(p) -> tuple[str, str, str]:
    """(fill, text colour, legend label) of a p-value's bin."""
    for bound, fill, ink, label in P_BINS:
        if _finite(p) and p < bound:
            return fill, ink, label
    return "#E0E0E0", MUTED, "no test"


def heatmap(systems: Sequence[str], p_values: Sequence[Sequence], *, title: str, width: int = 520,
            wins: Sequence[Sequence[bool]] | None = None) -> SafeString:
    """Rows: system i; columns: system j (by rank number); cell: one-sided p that i is better than j,
    coloured by significance level with the papers' stars. With `wins`, only cells where i wins (ranked
    higher) are coloured and starred; the others keep their p in the hover title."""
    n = len(systems)
    if n == 0:
        return _empty(width, 90, title, "No systems")
    left, top, cell, grid_w, width, parts = _grid_frame(systems, width, (16.0, 40.0),
                                                       "… is better than system (by rank)")
    height = top + grid_w + 48
    for i, name in enumerate(systems):
        cy = top + i * cell
        for j, other in enumerate(systems):
            p = p_values[i][j] if i < len(p_values) and j < len(p_values[i]) else None
            if i == j:
                fill, ink, tip = "#FFFFFF", MUTED, f"{name} (itself)"
            elif wins is not None and not wins[i][j]:
                fill, ink = "#FAFAFA", MUTED
                tip = f"{name} better than {other}: p = {format_p(p)} (ranked lower: not a win)"
            else:
                fill, ink, _ = p_bin(p)
                tip = f"{name} better than {other}: p = {format_p(p)} {stars(p)}".rstrip()
            parts.append(format_html(
                '<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#FFFFFF" '
                'stroke-width="1"><title>{}</title></rect>',
                _c(left + j * cell), _c(cy), _c(cell), _c(cell), fill, tip))
            if i == j:
                parts.append(_line(left + j * cell + 3, cy + 3, left + (j + 1) * cell - 3, cy + cell - 3, GRID))
            elif stars(p) and cell >= 18 and (wins is None or wins[i][j]):
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


# Pairwise preference bars (Läubli et al. 2018 Fig. 1) ----------------------------------------------------------

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


# Head-to-head win rates (relative ranking, docs/methods.md §8) --------------------------------------------------

def _diverging(rate: float) -> tuple[str, str]:
    """A fill from vermillion (0) through white (0.5) to blue (1), and a readable text colour on it."""
    blue, red = (0, 114, 178), (213, 94, 0)
    end, t = (blue, (rate - 0.5) * 2) if rate >= 0.5 else (red, (0.5 - rate) * 2)
    rgb = tuple(round(255 + (c - 255) * t) for c in end)
    return "#{:02X}{:02X}{:02X}".format(*rgb), ("#FFFFFF" if t > 0.6 else INK)


def win_rate_heatmap(systems: Sequence[str], rates: Sequence[Sequence], counts: Sequence[Sequence], *, title: str,
                     width: int = 560) -> SafeString:
    """Rows: system i, columns: system j (both in rank order); cell: the share of i's decided comparisons with
    j that i won (ties left out), blue above one half, vermillion below; the hover title gives the counts."""
    n = len(systems)
    if n == 0:
        return _empty(width, 90, title, "No systems")
    left, top, cell, grid_w, width, parts = _grid_frame(systems, width, (18.0, 44.0),
                                                       "… wins against system (by rank), ties left out")
    height = top + grid_w + 20
    for i, name in enumerate(systems):
        cy = top + i * cell
        for j, other in enumerate(systems):
            rate = rates[i][j]
            if i == j or not _finite(rate):
                fill, ink = ("#FFFFFF" if i == j else "#EEEEEE"), MUTED
                tip = f"{name} (itself)" if i == j else f"{name} vs {other}: never decided"
            else:
                fill, ink = _diverging(rate)
                wins, losses, ties = counts[i][j]
                tip = f"{name} vs {other}: won {wins}, lost {losses}, tied {ties} ({100 * rate:.0f} % of decided)"
            parts.append(format_html('<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                                     'stroke="#FFFFFF"><title>{}</title></rect>',
                                     _c(left + j * cell), _c(cy), _c(cell), _c(cell), fill, tip))
            if i != j and _finite(rate) and cell >= 26:
                parts.append(_text(left + j * cell + cell / 2, cy + cell / 2 + 4, f"{100 * rate:.0f}", "middle", ink,
                                   size=11, extra=' pointer-events="none"'))
    return _svg(width, height, title, _join(parts))
