"""A figure against a small count (editors per output, …): one line per series, marked points, shared axes."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.utils.safestring import SafeString

from .svg import (
    BLUE,
    GREEN,
    MUTED,
    ORANGE,
    PURPLE,
    SKY,
    VERMILLION,
    Scale,
    _join,
    _legend,
    _line,
    _marker,
    _svg,
    _text,
    nice_ticks,
    tick_label,
)

PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, SKY, PURPLE)
SHAPES = ("circle", "triangle", "square", "hollow")


def curve_chart(series: Mapping[str, Sequence[tuple[float, float]]], *, title: str, x_label: str, y_label: str,
                width: int = 640, height: int = 320) -> SafeString:
    """`series`: name -> [(x, y), …]; x integers from 0. Each series a line in its colour and mark shape."""
    points = [(x, y) for values in series.values() for x, y in values if y is not None]
    left, right, top, bottom = 56, 16, 40, 44
    xs = [x for x, _ in points] or [0, 1]
    ys = [y for _, y in points] or [0, 1]
    y_ticks = nice_ticks(min(0.0, min(ys)), max(ys) or 1.0)
    x = Scale(min(xs), max(max(xs), min(xs) + 1), left, width - right)
    y = Scale(y_ticks[0], y_ticks[-1], height - bottom, top)
    parts = [_legend(left, 16, [(SHAPES[i % len(SHAPES)], PALETTE[i % len(PALETTE)], name)
                                for i, name in enumerate(series)])]
    for t in y_ticks:
        parts.append(_line(left, y(t), width - right, y(t), "#E6E6E6"))
        parts.append(_text(left - 6, y(t) + 4, tick_label(t, y_ticks), "end", MUTED))
    for k in sorted(set(int(v) for v in xs)):
        parts.append(_text(x(k), height - bottom + 16, str(k), "middle", MUTED))
    parts.append(_text((left + width - right) / 2, height - 8, x_label, "middle", MUTED, size=11))
    parts.append(_text(12, top - 10, y_label, "start", MUTED, size=11))
    for i, (name, values) in enumerate(series.items()):
        colour, shape = PALETTE[i % len(PALETTE)], SHAPES[i % len(SHAPES)]
        shown = [(a, b) for a, b in values if b is not None]
        for (x0, y0), (x1, y1) in zip(shown, shown[1:], strict=False):
            parts.append(_line(x(x0), y(y0), x(x1), y(y1), colour, 1.6))
        parts += [_marker(shape, x(a), y(b), colour, f"{name}: {b:.2f} with {a} editor{'s' * (a != 1)}")
                  for a, b in shown]
    return _svg(width, height, title, _join(parts))
