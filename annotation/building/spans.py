"""Error spans as the platform stores them (docs/methods.md §11): half-open offsets `[start, end)` in Unicode
code points of the candidate text (Python's `len`), a severity, and for MQM a category. An omission is a
zero-length span at the very end of the text (the screen's `[missing]` marker). Spans of one answer may not
overlap, except that any number of omissions may sit at the end.

One checker serves the annotator's answers, the campaign file's AI-prefilled spans and the imported ESA
judgments, so all three refuse the same things with the same words.
"""
from __future__ import annotations

from collections.abc import Sequence

SEVERITIES = ("minor", "major", "critical")
#: MQM's default taxonomy (docs/methods.md §11); a campaign may replace it at import.
DEFAULT_MQM_TAXONOMY = (
    "Accuracy/Mistranslation", "Accuracy/Omission", "Accuracy/Addition", "Accuracy/Untranslated",
    "Fluency/Grammar", "Fluency/Spelling", "Fluency/Punctuation", "Fluency/Register", "Fluency/Inconsistency",
    "Terminology", "Style", "Locale convention", "Other", "Non-translation",
)
#: More spans than this in one answer is not an annotation but an attack.
MAX_SPANS = 200
_SPAN_KEYS = {"start", "end", "severity", "category"}


class SpanError(ValueError):
    """A span list that cannot be stored; the message names the span and the reason."""


def _offset(span: dict, key: str, index: int) -> int:
    value = span.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpanError(f"span {index}: '{key}' must be an integer offset (Unicode code points)")
    return value


def check_spans(spans, text: str, severities: Sequence[str] = ("minor", "major"),
                categories: Sequence[str] | None = None) -> list[dict]:
    """The spans, checked against `text` and normalised to `{"start", "end", "severity"[, "category"]}` in
    offset order; raises SpanError. `categories` None: no category is taken (ESA); a sequence: every span
    needs one of them (MQM)."""
    if not isinstance(spans, list):
        raise SpanError("'spans' must be a list of {\"start\", \"end\", \"severity\"} objects")
    if len(spans) > MAX_SPANS:
        raise SpanError(f"'spans' holds {len(spans)} spans; at most {MAX_SPANS}")
    length = len(text)
    checked = []
    for index, span in enumerate(spans):
        if not isinstance(span, dict):
            raise SpanError(f"span {index}: must be an object with 'start', 'end' and 'severity'")
        unknown = sorted(set(span) - _SPAN_KEYS)
        if unknown:
            raise SpanError(f"span {index}: unexpected field {unknown[0][:40]!r}")
        start, end = _offset(span, "start", index), _offset(span, "end", index)
        if not 0 <= start <= end <= length:
            raise SpanError(f"span {index}: [{start}, {end}) is out of bounds; the text has {length} characters "
                            f"(0 ≤ start ≤ end ≤ {length})")
        if start == end and start != length:
            raise SpanError(f"span {index}: an empty span marks an omission and must sit at the end ({length})")
        severity = span.get("severity")
        if severity not in severities:
            shown = severity if isinstance(severity, str) else type(severity).__name__
            raise SpanError(f"span {index}: unknown severity {str(shown)[:40]!r}; one of {', '.join(severities)}")
        entry = {"start": start, "end": end, "severity": severity}
        category = span.get("category")
        if categories is None:
            if category is not None:
                raise SpanError(f"span {index}: this protocol takes no 'category'")
        elif category is None:
            raise SpanError(f"span {index}: 'category' is missing; one of the campaign's taxonomy (e.g. "
                            f"{categories[0]!r})")
        elif category not in categories:
            shown = category if isinstance(category, str) else type(category).__name__
            raise SpanError(f"span {index}: unknown category {str(shown)[:60]!r}; the campaign's taxonomy has "
                            f"{len(categories)} categories (e.g. {categories[0]!r})")
        else:
            entry["category"] = category
        checked.append((index, entry))
    checked.sort(key=lambda pair: (pair[1]["start"], pair[1]["end"]))
    for (i, a), (j, b) in zip(checked, checked[1:], strict=False):
        if b["start"] < a["end"]:
            first, second = sorted((i, j))
            raise SpanError(f"spans {first} and {second} overlap ([{a['start']}, {a['end']}) and "
                            f"[{b['start']}, {b['end']}))")
    return [entry for _, entry in checked]
