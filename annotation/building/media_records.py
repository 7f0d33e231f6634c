"""Media kept with judgments collected elsewhere (docs/api.md §2.1, §5.5) and written back by the exports: entries
`{kind, src, alt?, caption?}` stored as given (nothing is fetched or served for an analysis-only campaign), and the
form the exports give them in."""
from __future__ import annotations

from annotation.building.media_refs import check_media
from annotation.models import Document, MediaItem


def parsed_media(record: dict, key: str) -> list[dict] | None:
    """A judgment line's `media` or `doc_media`, checked (any src: nothing is fetched); ValueError."""
    value = record.get(key)
    problems = check_media(value, key, allow_remote=True)
    if problems:
        raise ValueError(problems[0])
    return [{k: entry[k] for k in ("kind", "src", "alt", "caption") if entry.get(k)} for entry in value or ()] or None


def exported(entries) -> list[dict]:
    """Stored entries as an export writes them: kind, src, and alt and caption where given."""
    return [{k: entry[k] for k in ("kind", "src", "alt", "caption") if entry.get(k)} for entry in entries or ()]


def shown_media(segment_media, document_media) -> list[dict]:
    """What an item showed, for the judgment export: the document's own media, then its segment's, as kind and src."""
    document = (document_media or {}).get("document") or []
    return [{"kind": e["kind"], "src": e["src"]} for e in [*document, *(segment_media or [])]]


def store_imported_media(campaign, documents: dict[int, list[dict]], segments: list[tuple[int, int, list]]) -> None:
    """Rows for the media of an imported file: `documents` maps a document pk to its `doc_media`, `segments` lists
    (document pk, seg_id, media); each document's `media` keeps its own for the export."""
    rows = [MediaItem(campaign=campaign, document_id=doc, seg_id=seg_id, kind=e["kind"], src=e["src"],
                      alt=e.get("alt", ""), caption=e.get("caption", "")) for doc, seg_id, media in segments
            for e in media]
    rows += [MediaItem(campaign=campaign, document_id=doc, kind=e["kind"], src=e["src"], alt=e.get("alt", ""),
                       caption=e.get("caption", "")) for doc, media in documents.items() for e in media]
    MediaItem.objects.bulk_create(rows, batch_size=1000)
    Document.objects.bulk_update([Document(pk=doc, media={"document": media}) for doc, media in documents.items()],
                                 ["media"], batch_size=500)


def has_media(campaign) -> bool:
    return MediaItem.objects.filter(campaign=campaign).exists()
