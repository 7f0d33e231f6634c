"""The one CSV writer of the project: every CSV download and export goes through it.

Text that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage
return) gets a leading apostrophe, so a worker id such as `=HYPERLINK(…)` arrives as text. Neutral, below both
apps: annotation's judgment export and evaluation's result tables write through it.
"""
from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence

from django.http import HttpResponse, StreamingHttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value):
    """A value as written: None empty, formula-like text quoted, everything else as it is."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _Echo:
    def write(self, value):
        return value


def csv_lines(columns: Sequence[str], rows: Iterable[dict]) -> Iterator[str]:
    """The header, then one line per row (a dict; missing keys are empty)."""
    writer = csv.writer(_Echo())
    yield writer.writerow(columns)
    for row in rows:
        yield writer.writerow([cell(row.get(c)) for c in columns])


def csv_response(filename: str, columns: Sequence[str], rows: Iterable[dict], stream: bool = False) -> HttpResponse:
    """A CSV download; `stream` for exports too large to hold in memory."""
    lines = csv_lines(columns, rows)
    content_type = "text/csv; charset=utf-8"
    response = StreamingHttpResponse(lines, content_type=content_type) if stream else HttpResponse(
        "".join(lines), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
