"""Errors by category and severity per system: one horizontal stacked bar per system."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import (
    BLUE,
    CHAR,
    GREEN,
    INK,
    MUTED,
    ORANGE,
    PURPLE,
    SKY,
    VERMILLION,
    _c,
    _empty,
    _join,
    _legend,
    _line,
    _svg,
    _text,
    truncate,
)

PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, SKY, PURPLE, "#F0E442", "#999999")
#: Severity as opacity: major and critical solid, minor light, anything else (e.g. neutral) lighter still.
OPACITY = {"critical": 1.0, "major": 0.85, "minor": 0.45}


def stacked_error_bars(rows: Sequence[dict], systems: Sequence[str], *, title: str, width: int = 760) -> SafeString:
    """`rows`: {system, category, severity, per_judgment}; bars in the order of `systems`, one segment per
    category and severity (category by colour, severity by shade), each with its count in a hover title."""
    shown = [r for r in rows if r.get("per_judgment")]
    if not shown:
        return _empty(width, 90, title, "No errors marked yet")
    categories = sorted({r["category"].split("/")[0] for r in shown})
    colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}
    totals = {s: sum(r["per_judgment"] for r in shown if r["system"] == s) for s in systems}
    top_total = max(totals.values()) or 1.0
    label_chars = min(max(len(str(s)) for s in systems) + 2, 28)
    left, right, top, bar_h, gap = 12 + label_chars * CHAR, 70, 52, 18, 8
    height = top + len(systems) * (bar_h + gap) + 46
    span = width - left - right
    legend = [("swatch", colour[c], c) for c in categories[:8]]
    parts = [_legend(left, 16, legend),
             _text(left, 36, "shade: dark = major/critical, light = minor", fill=MUTED, size=11)]
    for k in range(5):
        value = top_total * k / 4
        x = left + span * k / 4
        parts.append(_line(x, top - 4, x, height - 42, "#E6E6E6"))
        parts.append(_text(x, height - 26, f"{value:.2f}", "middle", MUTED))
    order = {(c, s): i for i, (c, s) in enumerate(sorted({(r["category"], r["severity"]) for r in shown}))}
    for i, system in enumerate(systems):
        y0 = top + i * (bar_h + gap)
        parts.append(_text(left - 8, y0 + bar_h / 2 + 4, truncate(system, label_chars), "end", INK))
        x = left
        for r in sorted((r for r in shown if r["system"] == system), key=lambda r: order[(r["category"],
                                                                                         r["severity"])]):
            w = span * r["per_judgment"] / top_total
            tip = (f"{system}: {r['category']}, {r['severity']}: {r['errors']} errors "
                   f"({r['per_judgment']:.3f} a judgment)")
            parts.append(format_html('<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                                     'fill-opacity="{}" stroke="#FFFFFF" stroke-width=".5"><title>{}</title></rect>',
                                     _c(x), _c(y0), _c(max(w, 0.5)), bar_h, colour[r["category"].split("/")[0]],
                                     OPACITY.get(r["severity"], 0.3), tip))
            x += w
        parts.append(_text(x + 6, y0 + bar_h / 2 + 4, f"{totals[system]:.2f}", fill=MUTED, size=11))
    parts.append(_text(left + span / 2, height - 6, "errors per judgment", "middle", MUTED, size=11))
    return _svg(width, height, title, _join(parts))
