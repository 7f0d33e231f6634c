"""Media attached to an imported campaign's documents, as the bundle import stores them (Document.media, MediaItem;
docs/api.md §2.1), for tests of what the screens and the annotator API do with media. No file is stored: the
tests here need the media's kinds and serving URLs, not their bytes."""
from __future__ import annotations

from annotation.models import Document, MediaItem


def attach_media(campaign, doc_id: str, document: list[str] = (), segments: dict[int, list[str]] | None = None
                 ) -> dict:
    """Give the document `doc_id` its own media of the `document` kinds and each segment (by seg_id) the media of
    its kinds; returns the stored Document.media."""
    doc = Document.objects.get(campaign=campaign, doc_id=doc_id)
    seg_ids = list(doc.segments.order_by("seg_id").values_list("seg_id", flat=True))

    def entry(kind: str, seg_id: int | None, k: int) -> dict:
        medium = MediaItem.objects.create(campaign=campaign, document=doc, seg_id=seg_id, kind=kind,
                                          src=f"media/{kind}-{seg_id}-{k}", alt=f"{kind} {k}")
        return {"id": medium.key, "kind": kind, "src": medium.src, "alt": medium.alt, "caption": ""}

    segments = segments or {}
    doc.media = {"document": [entry(kind, None, k) for k, kind in enumerate(document)],
                 "segments": [[entry(kind, s, k) for k, kind in enumerate(segments.get(s, []))] for s in seg_ids],
                 "seg_ids": seg_ids}
    doc.save(update_fields=["media"])
    return doc.media
