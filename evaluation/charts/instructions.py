"""Instruction following per system: one 100 % stacked bar per system (yes, partly, no), with the yes share's 95 %
Wilson interval as a whisker."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import format_html
from django.utils.safestring import SafeString

from .svg import CHAR, GREEN, INK, MUTED, ORANGE, VERMILLION, _c, _empty, _join, _legend, _line, _svg, _text, truncate

#: yes, partly, no: colour-blind safe, and told apart by position too (yes from the left, no from the right).
COLOURS = (("yes", GREEN), ("partly", ORANGE), ("no", VERMILLION))


def instruction_bars(rows: Sequence[dict], *, title: str, width: int = 760) -> SafeString:
    """`rows`: the `instruction_following` table's rows (system, n, <answer>, <answer>_share, yes_low, yes_high)."""
    shown = [r for r in rows if r.get("n")]
    if not shown:
        return _empty(width, 90, title, "No instruction judgments yet")
    label_chars = min(max(len(str(r["system"])) for r in shown) + 2, 28)
    left, right, top, bar_h, gap = 12 + label_chars * CHAR, 80, 40, 20, 10
    height = top + len(shown) * (bar_h + gap) + 40
    span = width - left - right
    parts = [_legend(left, 16, [("swatch", colour, answer) for answer, colour in COLOURS]),
             _text(left + 230, 17, "whisker: 95 % Wilson interval of yes", fill=MUTED, size=11)]
    for k in range(5):
        x = left + span * k / 4
        parts.append(_line(x, top - 4, x, height - 34, "#E6E6E6"))
        parts.append(_text(x, height - 20, f"{25 * k} %", "middle", MUTED))
    for i, r in enumerate(shown):
        y0 = top + i * (bar_h + gap)
        parts.append(_text(left - 8, y0 + bar_h / 2 + 4, truncate(str(r["system"]), label_chars), "end", INK))
        x = left
        for answer, colour in COLOURS:
            w = span * (r.get(f"{answer}_share") or 0.0)
            if w > 0:
                tip = (f"{r['system']}: {answer} {r.get(answer, 0)} of {r['n']} "
                       f"({100 * (r.get(f'{answer}_share') or 0):.1f} %, 95 % CI "
                       f"{100 * (r.get(f'{answer}_low') or 0):.1f}–{100 * (r.get(f'{answer}_high') or 0):.1f} %)")
                parts.append(format_html('<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                                         'stroke="#FFFFFF" stroke-width=".5"><title>{}</title></rect>',
                                         _c(x), _c(y0), _c(w), bar_h, colour, tip))
            x += w
        if r.get("yes_low") is not None and r.get("yes_high") is not None:
            x1, x2, mid = left + span * r["yes_low"], left + span * r["yes_high"], y0 + bar_h / 2
            parts += [_line(x1, mid, x2, mid, INK, 1.5), _line(x1, mid - 5, x1, mid + 5, INK, 1.5),
                      _line(x2, mid - 5, x2, mid + 5, INK, 1.5)]
        parts.append(_text(left + span + 6, y0 + bar_h / 2 + 4, f"n = {r['n']}", fill=MUTED, size=11))
    return _svg(width, height, title, _join(parts))
