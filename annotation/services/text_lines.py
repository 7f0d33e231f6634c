"""Reading uploaded files line by line, whatever they arrive as (bytes from an upload, str from a test)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator


def numbered_lines(lines: Iterable[bytes | str], errors: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line, decoded as UTF-8 with a leading byte-order mark dropped.

    A line that is not UTF-8 is reported in `errors` and given as an empty line, so that
    callers keep counting lines as the file has them.
    """
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                errors.append((number, "not valid UTF-8"))
                raw = ""
        yield number, raw.lstrip("\ufeff") if number == 1 else raw
