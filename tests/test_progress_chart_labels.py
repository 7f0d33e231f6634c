"""The progress chart's time labels stay inside the chart: the last tick ("23:00") sat on the right edge, centred,
and half of it was clipped; a label that would cross the edge now ends at its tick."""
import re

from evaluation.charts.progress import label_width, line_chart

TEXT = re.compile(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="(\w+)"[^>]*>([^<]*)</text>')


def extent(x: float, anchor: str, text: str) -> tuple[float, float]:
    width = label_width(text)
    return {"start": (x, x + width), "middle": (x - width / 2, x + width / 2), "end": (x - width, x)}[anchor]


def test_the_last_time_label_ends_inside_the_chart():
    times = [f"2026-11-27T{h:02d}:00:00+00:00" for h in range(19, 24)]
    svg = str(line_chart(times, list(range(1, 6)), title="Judgments", y_label="Judgments", width=440))
    labels = [(float(x), anchor, text) for x, anchor, text in TEXT.findall(svg) if re.fullmatch(r"\d\d:\d\d", text)]
    assert labels and labels[-1][2] == "23:00", labels
    for x, anchor, text in labels:
        low, high = extent(x, anchor, text)
        assert 0 <= low and high <= 440, (text, anchor, low, high)
