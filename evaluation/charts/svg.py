"""SVG building blocks shared by every chart: palette, scales and ticks, markup primitives, p-value text.

Every label goes through `format_html`, so names typed by users (campaigns, systems, worker ids) reach
the page escaped; numbers are formatted here. Colours are Okabe & Ito's colour-blind-safe palette.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from ..stats.systems import stars as significance_stars

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
