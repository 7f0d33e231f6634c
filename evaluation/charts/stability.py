"""Ranking stability (docs/methods.md §12.4): each system's probability of each rank over the bootstrap's
resamples, as a systems × ranks heat map with the mean rank and the 95 % rank interval beside each row. Each
cell's title and the page's data table give the exact figures."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import CHAR, FONT, GRID, INK, MUTED, _c, _empty, _finite, _join, _svg, _text, truncate

#: The sequential scale's ends (white to dark blue, one hue, readable in grey).
LOW_RGB, HIGH_RGB = (247, 251, 255), (8, 48, 107)
LEGEND_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)


def probability_fill(p: float) -> tuple[str, str]:
    """The cell's fill for probability p (0 white … 1 dark blue) and a text colour readable on it."""
    t = min(max(float(p), 0.0), 1.0) if _finite(p) else 0.0
    t = t ** 0.6  # small probabilities stay visible
    rgb = tuple(round(lo + (hi - lo) * t) for lo, hi in zip(LOW_RGB, HIGH_RGB, strict=True))
    return "#{:02X}{:02X}{:02X}".format(*rgb), ("#FFFFFF" if t > 0.55 else INK)


def _cell_text(p: float) -> str:
    if not _finite(p) or p <= 0:
        return ""
    return "<1" if p < 0.005 else f"{100 * p:.0f}"


def rank_probability_chart(rows: Sequence[dict], *, title: str, srp: float | None = None,
                           width: int = 560) -> SafeString:
    """Rows in observed rank order: {label, system, probabilities (rank 1 … S), mean_rank, interval (low,
    high)}. Cell (system, rank k): the share of resamples in which the system ranked k, in per cent; the
    observed rank's cell is outlined; beside each row its mean rank and 95 % rank interval."""
    n = len(rows)
    if n == 0:
        return _empty(width, 90, title, "No ranking stability computed")
    label_chars = min(max(len(str(r["label"])) for r in rows) + 2, 24)
    left, right = 10 + label_chars * CHAR, 118
    cell = max(18.0, min(40.0, (width - left - right - 10) / n))
    top, grid_w = 58, cell * n
    width = max(width, int(left + grid_w + right + 10))
    height = top + grid_w + 52
    heading = "Share of resamples at each rank (per cent)"
    if _finite(srp):
        heading += f" · stable-ranking probability {100 * srp:.1f} %"
    parts = [_text(10, 16, heading, fill=INK, weight="600"),
             _text(left + grid_w / 2, top - 24, "rank", "middle", MUTED),
             _text(left + grid_w + 12, top - 8, "mean rank [95 %]", fill=MUTED)]
    for k in range(n):
        parts.append(_text(left + k * cell + cell / 2, top - 8, str(k + 1), "middle", MUTED))
    for i, row in enumerate(rows):
        cy = top + i * cell
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end" fill="{}">{}<title>{}</title></text>',
                                 _c(left - 6), _c(cy + cell / 2 + 4), INK, truncate(row["label"], label_chars),
                                 row["label"]))
        for k, p in enumerate(row["probabilities"]):
            fill, ink = probability_fill(p)
            tip = f"{row['system']}: rank {k + 1} in {100 * p:.1f} % of resamples" if _finite(p) else \
                f"{row['system']}: rank {k + 1}: no figure"
            parts.append(format_html(
                '<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#FFFFFF" '
                'stroke-width="1"><title>{}</title></rect>', _c(left + k * cell), _c(cy), _c(cell), _c(cell), fill,
                tip))
            text = _cell_text(p)
            if text and cell >= 22:
                parts.append(_text(left + k * cell + cell / 2, cy + cell / 2 + 4, text, "middle", ink,
                                   size=11 if cell < 30 else FONT, extra=' pointer-events="none"'))
        # The observed rank (rows are in observed order, so the diagonal).
        parts.append(format_html('<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}" '
                                 'stroke-width="2"/>', _c(left + i * cell + 1), _c(cy + 1), _c(cell - 2),
                                 _c(cell - 2), "#E69F00"))
        low, high = row.get("interval") or (None, None)
        mean = row.get("mean_rank")
        interval = f"[{low}–{high}]" if _finite(low) and _finite(high) else ""
        parts.append(_text(left + grid_w + 12, cy + cell / 2 + 4,
                           f"{mean:.2f} {interval}" if _finite(mean) else "–", fill=INK))
    parts.append(format_html('<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}"/>',
                             _c(left), _c(top), _c(grid_w), _c(grid_w), GRID))
    parts.append(_legend(top + grid_w + 30))
    return _svg(width, height, title + (f"; stable-ranking probability {100 * srp:.1f} %" if _finite(srp) else ""),
                _join(parts))


def _legend(y: float) -> SafeString:
    parts, x = [], 10.0
    for p in LEGEND_STEPS:
        fill, _ = probability_fill(p)
        parts.append(format_html('<rect x="{}" y="{}" width="14" height="14" fill="{}" stroke="#BBBBBB"/>',
                                 _c(x), _c(y - 11), fill))
        label = f"{100 * p:.0f} %"
        parts.append(_text(x + 19, y, label, fill=INK, size=11))
        x += 30 + len(label) * 6.2
    parts.append(format_html('<rect x="{}" y="{}" width="14" height="14" fill="none" stroke="#E69F00" '
                             'stroke-width="2"/>', _c(x + 6), _c(y - 11)))
    parts.append(_text(x + 25, y, "observed rank", fill=INK, size=11))
    return _join(parts)
