"""The power curve of a planned campaign (docs/methods.md §12.3): simulated power against counted translations
per system, the probit fit through it, the target power and the answer marked."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.safestring import SafeString

from .svg import AXIS, BLUE, GRID, MUTED, VERMILLION, Scale, _empty, _join, _line, _marker, _svg, _text, nice_ticks


def power_chart(points: Sequence[dict], *, target: float, answer: int | None, width: int = 640,
                height: int = 320) -> SafeString:
    """`points`: the API's curve (translations_per_system, power, fitted, hits, money), ascending in n; `target`
    the power asked for (a dashed line), `answer` the n found (a dashed line and its label), or None."""
    title = "Power against translations per system"
    shown = [p for p in points if p.get("power") is not None]
    if not shown:
        return _empty(width, height, title, "No simulations")
    left, right, top, bottom = 56, 20, 30, 46
    x_ticks = nice_ticks(0, max(p["translations_per_system"] for p in shown))
    x = Scale(x_ticks[0], x_ticks[-1], left, width - right)
    y_ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    y = Scale(0.0, 1.0, height - bottom, top)
    parts = [_text(left - 44, 16, "power (share of simulated campaigns that separate the systems)", fill=MUTED,
                   weight="600")]
    for t in y_ticks:
        parts.append(_line(left, y(t), width - right, y(t), GRID))
        parts.append(_text(left - 6, y(t) + 4, f"{t:.1f}", "end", MUTED))
    for t in x_ticks:
        parts.append(_line(x(t), height - bottom, x(t), height - bottom + 4))
        parts.append(_text(x(t), height - bottom + 17, f"{t:,.0f}", "middle", MUTED))
    parts.append(_line(left, height - bottom, width - right, height - bottom, AXIS))
    parts.append(_text((left + width - right) / 2, height - 8, "translations per system that count (n)", "middle",
                       MUTED))
    parts.append(_line(left, y(target), width - right, y(target), VERMILLION, 1.2, "5 4"))
    parts.append(_text(width - right - 4, y(target) - 5, f"target {target:g}", "end", VERMILLION))
    if answer is not None:
        parts.append(_line(x(answer), top, x(answer), height - bottom, VERMILLION, 1.2, "5 4"))
        parts.append(_text(x(answer) + 5, top + 12, f"n = {answer:,}", "start", VERMILLION, weight="600"))
    fitted = [p for p in shown if p.get("fitted") is not None]
    for a, b in zip(fitted, fitted[1:], strict=False):
        parts.append(_line(x(a["translations_per_system"]), y(a["fitted"]), x(b["translations_per_system"]),
                           y(b["fitted"]), BLUE, 1.6))
    for p in shown:
        n = p["translations_per_system"]
        parts.append(_marker("circle", x(n), y(p["power"]), BLUE,
                             f"n = {n:,}: simulated power {p['power']:.2f}; {p['hits']:,} HITs, {p['money']}"))
    return _svg(width, height, title, _join(parts))
