"""The media an annotator's screen shows with an item (docs/api.md §8.2), built from what the one read of
annotation/services/judging_sql.py brings along (the item's segment and its document), so the annotator path
runs no extra query.

A document's `media` holds, when it has any, `{"document": [entry], "segments": [[entry] per segment in document
order], "seg_ids": [seg_id per segment]}`, each entry `{"id", "kind", "src", "alt", "caption"}` as stored at import
(annotation/services/media_import.py). The payload gives each entry as `{"kind", "url", "alt", "caption"}`, `url`
the HIT-scoped serving URL `/api/hit/<token>/media/<id>/` (annotation/views/media.py)."""
from __future__ import annotations

from .screen_context import DOCUMENT_OUTPUTS, DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS, UNIT_ITEMS

#: What a screen that shows its whole document reads (Protocol.shows_document's default); UNIT_ITEMS only for an
#: item of a unit (document-level DA), as judging_sql reads them.
DOCUMENT_READS = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_OUTPUTS, DOCUMENT_SYSTEM_OUTPUTS})


def media_url(token: str, key: str) -> str:
    return f"/api/hit/{token}/media/{key}/"


def shown(token: str, entries: list[dict]) -> list[dict]:
    """Stored entries as the screen gets them: the serving URL instead of the id and the bundle path."""
    return [{"kind": e["kind"], "url": media_url(token, e["id"]), "alt": e.get("alt") or "",
             "caption": e.get("caption") or ""} for e in entries if e.get("id")]


def shows_document(protocol, item) -> bool:
    """Whether `item`'s screen shows its whole document (Protocol.shows_document, or by default whether the screen
    reads its document or the unit the item belongs to)."""
    if protocol.shows_document is not None:
        return protocol.shows_document
    if protocol.screen_reads & DOCUMENT_READS:
        return True
    return UNIT_ITEMS in protocol.screen_reads and (item.payload or {}).get("first") is not None


def media_fields(token: str, item, document_view: bool = True) -> dict:
    """What an item's payload gains: `media` (the document's own media, then those of the item's segment) and,
    on a screen that shows the whole document (`document_view`), `document_media` (one list per segment of the
    document, in document order, aligned with the document views' lists of sentences) when the document has
    segment media; {} for an item without media. Left out elsewhere: a one-sentence screen does not need it, and
    building it for every segment of the document cost a DA GET a third more CPU (benchmarks/README.md)."""
    segment = getattr(item, "segment", None) if item.segment_id is not None else None
    if segment is None:
        return {}
    media = segment.document.media or {}
    if not media:
        return {}
    segments = media.get("segments") or []
    try:
        own = segments[media.get("seg_ids", []).index(segment.seg_id)]
    except (ValueError, IndexError):
        own = []
    fields = {}
    shown_media = shown(token, (media.get("document") or []) + own)
    if shown_media:
        fields["media"] = shown_media
    if document_view and any(segments):
        fields["document_media"] = [shown(token, entries) for entries in segments]
    return fields
