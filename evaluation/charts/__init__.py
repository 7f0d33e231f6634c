"""Server-drawn SVG charts for the results pages: pure functions from numbers and labels to markup.

Nothing here touches the database. Each mark carries a `<title>` for hover, and series differ by shape
or position as well as colour. `svg` holds the shared primitives; one module per kind of chart.
"""
from .calibration import change_chart
from .curves import curve_chart
from .progress import line_chart
from .rankings import heatmap, p_bin, preference_bars, ranking_chart, win_rate_heatmap
from .spans import stacked_error_bars
from .svg import GREEN, MUTED, format_p, stars
from .workers import GOLD_STATUS_GROUPS, rate_bars, scatter_chart

__all__ = ["GOLD_STATUS_GROUPS", "GREEN", "MUTED", "change_chart", "curve_chart", "format_p", "heatmap",
           "line_chart", "p_bin", "preference_bars", "ranking_chart", "rate_bars", "scatter_chart",
           "stacked_error_bars", "stars", "win_rate_heatmap"]
