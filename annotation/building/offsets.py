"""Span offsets as other tools count them, to and from the platform's half-open code-point offsets
(docs/api.md §5.6): JavaScript's UTF-16 code units (Appraise) and inclusive ends (Appraise, Pearmut)."""
from __future__ import annotations


def utf16_to_code_points(text: str) -> dict[int, int]:
    """Each UTF-16 offset of `text` that falls between characters (0 … its UTF-16 length) -> its code-point
    offset; an offset inside a surrogate pair is missing."""
    index, units = {0: 0}, 0
    for position, char in enumerate(text, start=1):
        units += 2 if ord(char) > 0xFFFF else 1
        index[units] = position
    return index


def code_point_to_utf16(text: str, offset: int) -> int:
    """The UTF-16 offset of code-point offset `offset` of `text`."""
    return offset + sum(1 for char in text[:offset] if ord(char) > 0xFFFF)


def inclusive_spans(raw: list, where: str = "", utf16_of: str | None = None) -> list[dict]:
    """Spans written `{"start_i", "end_i" (inclusive), "severity", "category"?}` (Pearmut, Appraise) as the
    platform's half-open code-point spans; with `utf16_of` the offsets count UTF-16 code units of that text
    (Appraise) and an offset out of bounds or inside a surrogate pair is refused. ValueError names the span,
    after `where` (e.g. "segment 2, model 'X': ")."""
    index = utf16_to_code_points(utf16_of) if utf16_of is not None else None
    converted = []
    for number, span in enumerate(raw):
        if not isinstance(span, dict):
            raise ValueError(f"{where}span {number} must be an object")
        start, end = span.get("start_i"), span.get("end_i")
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (start, end)):
            raise ValueError(f"{where}span {number} needs integer 'start_i' and 'end_i'")
        if index is not None:
            if start not in index or end + 1 not in index:
                raise ValueError(f"{where}span {number}: [{start}, {end}] (UTF-16, inclusive) is out of the text's "
                                 "bounds or splits a character")
            start, end = index[start], index[end + 1] - 1
        one = {"start": start, "end": end + 1, "severity": span.get("severity")}
        if span.get("category") is not None:
            one["category"] = span["category"]
        converted.append(one)
    return converted
