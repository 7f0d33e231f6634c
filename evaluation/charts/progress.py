"""Progress over time: cumulative judgments or completed HITs as a line over time buckets (UTC)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import AXIS, BLUE, FONT, GRID, MUTED, Scale, _c, _empty, _join, _line, _marker, _svg, _text, nice_ticks

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


def label_width(text: str) -> float:
    """A generous estimate of a label's width in pixels (digits and colons are about 0.6 em wide)."""
    return 0.6 * FONT * len(text)


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
        at = x(moment.timestamp())  # a label centred on a tick at the right edge would clip: end it there
        anchor = "end" if at + label_width(label) / 2 > width else "middle"
        parts.append(_text(at, height - bottom + 17, label, anchor, MUTED))
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
