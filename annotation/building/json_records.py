"""Reading the JSON files other tools write, a record (object) at a time with the line it starts on: JSON Lines
(one object a line) or one JSON array of objects (LMSYS's published battles, Appraise's and Anthea's exports),
told apart by the first character. Errors are (line, reason) pairs, as every import format reports them."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from .text_lines import numbered_lines

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def json_records(lines: Iterable[bytes | str], errors: list[tuple[int, str]]) -> Iterator[tuple[int, object]]:
    """(line number, decoded value) of each record of a JSON Lines file or of a file holding one JSON array; an
    undecodable line or element is reported in `errors` (with its line) and skipped."""
    numbered = numbered_lines(lines, errors)
    first: list[tuple[int, str]] = []
    for number, text in numbered:
        first.append((number, text))
        if text.strip():
            break
    if first and first[-1][1].lstrip().startswith("["):
        yield from _array_records("".join(t for _, t in first) + "".join(t for _, t in numbered), errors)
        return
    for number, text in [*first, *numbered]:
        if not text.strip():
            continue
        try:
            yield number, json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            errors.append((number, f"not valid JSON: {exc.msg} (column {exc.colno})"))


def _array_records(text: str, errors: list[tuple[int, str]]) -> Iterator[tuple[int, object]]:
    """The elements of one JSON array, each with the line it starts on; decoding stops at the first syntax error."""
    position, size = text.index("[") + 1, len(text)

    def skip(at: int) -> int:
        while at < size and text[at] in _SPACE:
            at += 1
        return at

    def line_of(at: int) -> int:
        return text.count("\n", 0, at) + 1

    position = skip(position)
    if position < size and text[position] == "]":
        return
    while position < size:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            errors.append((exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})"))
            return
        yield line_of(position), value
        position = skip(end)
        if position < size and text[position] == ",":
            position = skip(position + 1)
        elif position < size and text[position] == "]":
            if text[skip(position + 1):].strip():
                errors.append((line_of(position), "text after the closing ] of the array"))
            return
        else:
            errors.append((line_of(position), "expected , or ] between the array's elements"))
            return
    errors.append((line_of(size), "the array is not closed with ]"))


def string_field(record: dict, key: str, problems: list[str], *, required: bool = True, longest: int = 255) -> str:
    """A record's text field, its problem appended to `problems` (missing, not text, too long, NUL)."""
    value = record.get(key)
    if value is None or value == "":
        if required:
            problems.append(f"{key} is missing")
        return ""
    if not isinstance(value, str):
        problems.append(f"{key} must be text, not {type(value).__name__}")
        return ""
    if len(value) > longest:
        problems.append(f"{key} must be at most {longest} characters, not {len(value)}")
        return ""
    if "\x00" in value or any("\ud800" <= ch <= "\udfff" for ch in value):
        problems.append(f"{key} must not contain NUL characters or lone surrogates")
        return ""
    return value
