"""Reading uploaded files line by line, whatever they arrive as: a binary file (an upload, a file on disk),
a path, or an iterable of lines (bytes or str, as tests give them); and the fields every import format reads
from a line: CSV fields (`csv_fields`) and numbers (`bounded_number`), refused with a ValueError that the
format reports with the line's number, never an exception of the csv module or of float conversion.

Binary files are split as Django's `File` splits them (a line ends with \\n, \\r\\n or \\r), a chunk at a time,
so a file is never held whole; unlike `File.__iter__`, a long line is joined once, not chunk by chunk.
`LineSource` also remembers where each line is, so an import can validate a file in one pass and read the
lines it keeps again later instead of holding their texts.
"""
from __future__ import annotations

import csv
import math
import os
import tempfile
from collections.abc import Iterable, Iterator

#: Bytes read at a time.
CHUNK = 1 << 20
#: A longer line is refused without being held (a campaign line of 20 systems at the longest texts allowed,
#: escaped as JSON, stays far below).
MAX_LINE_BYTES = 16 * 1024 * 1024
TOO_LONG = f"the line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MB"


def is_binary_file(source) -> bool:
    """A seekable file object read as bytes (an upload, BytesIO, a file opened with "rb")."""
    if not (hasattr(source, "read") and hasattr(source, "seek")):
        return False
    try:
        seekable = source.seekable() if hasattr(source, "seekable") else True
        return bool(seekable) and isinstance(source.read(0), bytes)
    except (OSError, ValueError):
        return False


def split_binary(read, chunk_size: int = CHUNK) -> Iterator[tuple[int, int, bytes | None]]:
    """(offset, length, line) of each line read through `read(size)`, the line with its end (\\n, \\r\\n or
    \\r) and None when it is longer than MAX_LINE_BYTES (its pieces are dropped as they come)."""
    offset = 0
    pending: list[bytes] = []
    pending_size = 0
    pending_cr = False  # the unfinished line ended with \r at a chunk's end: a \n may follow

    def finish(tail: bytes = b""):
        nonlocal offset, pending, pending_size, pending_cr
        size = pending_size + len(tail)
        line = None if size > MAX_LINE_BYTES else b"".join(pending) + tail if pending else tail
        start, offset = offset, offset + size
        pending, pending_size, pending_cr = [], 0, False
        return start, size, line

    while True:
        chunk = read(chunk_size)
        if not chunk:
            break
        if pending_cr:
            if chunk[:1] == b"\n":
                yield finish(b"\n")
                chunk = chunk[1:]
            else:
                yield finish()
            if not chunk:
                continue
        parts = chunk.splitlines(keepends=True)
        last = parts.pop()
        for part in parts:
            if pending_size:
                yield finish(part)
            else:
                yield _whole(part, offset)
                offset += len(part)
        if last.endswith(b"\n"):
            if pending_size:
                yield finish(last)
            else:
                yield _whole(last, offset)
                offset += len(last)
            continue
        pending_size += len(last)
        if pending_size <= MAX_LINE_BYTES:
            pending.append(last)
        else:
            pending.clear()
        pending_cr = last.endswith(b"\r")
    if pending_size:
        yield finish()


def _whole(part: bytes, offset: int) -> tuple[int, int, bytes | None]:
    return offset, len(part), None if len(part) > MAX_LINE_BYTES else part


def strip_end(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
    return line[:-1] if line.endswith(b"\r") else line


def decode(number: int, raw: bytes | str | None, errors: list[tuple[int, str]]) -> str:
    """A line as text: UTF-8 with a leading byte-order mark dropped on line 1; a line that is not UTF-8 (or
    too long) is reported in `errors` and given as an empty line, so that callers keep counting lines."""
    if raw is None:
        errors.append((number, TOO_LONG))
        return ""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            errors.append((number, "not valid UTF-8"))
            return ""
    return raw.lstrip("\ufeff") if number == 1 else raw


def numbered_lines(lines: Iterable[bytes | str], errors: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line of a binary file or an iterable of lines, decoded as UTF-8 with a
    leading byte-order mark dropped (see `decode`)."""
    if is_binary_file(lines):
        lines.seek(0)
        lines = (line for _, _, line in split_binary(lines.read))
    for number, raw in enumerate(lines, start=1):
        yield number, decode(number, raw, errors)


class LineSource:
    """A file read once line by line (`lines()`), then any of its lines again by where it was (`read`).

    A path is opened, a binary file object is read where it is (from its start), and anything else (an
    iterable of lines) is first copied to a temporary file as it is read, one element a line."""

    def __init__(self, source):
        self._spool_from = None
        if isinstance(source, (str, os.PathLike)):
            self.handle, self._own = open(source, "rb"), True  # noqa: SIM115 (closed by close())
        elif is_binary_file(source):
            self.handle, self._own = source, False
            self.handle.seek(0)
        else:
            self.handle, self._own = tempfile.TemporaryFile(), True  # noqa: SIM115
            self._spool_from = source

    def lines(self) -> Iterator[tuple[int, int, int, bytes | None]]:
        """(number, offset, length, line) of each line, the line with its end; None if too long."""
        if self._spool_from is not None:
            yield from self._spool()
            return
        self.handle.seek(0)
        for number, (offset, length, line) in enumerate(split_binary(self.handle.read), start=1):
            yield number, offset, length, line

    def _spool(self):
        offset, write = 0, self.handle.write
        for number, element in enumerate(self._spool_from, start=1):
            data = element.encode("utf-8", "surrogatepass") if isinstance(element, str) else bytes(element)
            if not data.endswith((b"\n", b"\r")):
                data += b"\n"
            write(data)
            yield number, offset, len(data), None if len(data) > MAX_LINE_BYTES else data
            offset += len(data)
        self._spool_from = None
        self.handle.flush()

    def read(self, offset: int, length: int) -> bytes:
        self.handle.seek(offset)
        return self.handle.read(length)

    def close(self) -> None:
        if self._own:
            self.handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def csv_fields(text: str, delimiter: str = ",") -> list[str]:
    """The fields of one CSV line (quoted as spreadsheets write them), each stripped of surrounding spaces;
    ValueError for what the csv module refuses. Each line is read on its own, so a quote left open never swallows
    the lines after it; and a field beyond the csv module's limit (128 KB, far above any field an import keeps)
    is a refusal of its line, not a csv.Error that stops the import."""
    try:
        return [field.strip() for field in next(csv.reader([text], delimiter=delimiter), [])]
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise ValueError(f"a field is longer than {csv.field_size_limit() // 1024} KB") from None
        raise ValueError(f"not a CSV line: {exc}") from None


def bounded_number(value, what: str, low: float, high: float, *, text: bool = False) -> float:
    """A number of an imported line within [low, high]: a JSON number, or with `text` a field of a text format
    such as "62.5". ValueError naming `what` for anything else: not a number, NaN, an infinity, or an integer
    too large for a float (a JSON integer of 400 digits, which `float()` and `math.isfinite` would answer with
    an OverflowError)."""
    if text and isinstance(value, str):
        try:
            number = float(value)  # a text too large for a float is inf, never an OverflowError
        except ValueError:
            raise ValueError(f"{what} must be a number, not {value[:20]!r}") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number from {low:g} to {high:g}, not {str(value)[:20]!r}")
    elif isinstance(value, int):
        number = float(value) if abs(value) <= 2**1000 else math.inf if value > 0 else -math.inf
    else:
        number = value
    if not (math.isfinite(number) and low <= number <= high):
        raise ValueError(f"{what} must lie between {low:g} and {high:g}, not {str(value)[:20]}")
    return number
