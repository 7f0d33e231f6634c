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
