"""The media of a campaign import (docs/api.md §2.1): every `src` of the file resolved and checked before anything
is stored (a bundle's file, or a remote URL fetched once when the campaign sets `fetch_remote_media`), then the
files written to the "media" storage and the `MediaItem` rows, `Segment.media` and `Document.media` stored with the
campaign (services/campaign_import.py), in its transaction. A file written by an import that then fails is removed.

Files are named by the SHA-256 of their content (`<2 hex>/<sha256><ext>`), so a file used by several lines or
campaigns is stored once; a campaign's deletion leaves them (another campaign may use them)."""
from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.core.files import File
from django.core.files.storage import storages

from ..building.campaign_files import CampaignFileError, Problems
from ..building.media_refs import EXTENSIONS, is_remote, sniff
from ..media_models import new_media_key
from ..models import Document, MediaItem
from .media_bundle import Bundle, looks_like_zip
from .media_fetch import FetchError, fetch


def media_storage():
    return storages["media"]


@contextlib.contextmanager
def campaign_source(lines) -> Iterator[tuple[object, Bundle | None]]:
    """(the campaign file, the bundle or None): a zip upload or path opens as a bundle (checked whole, refused
    with CampaignFileError), and its JSONL is the campaign file; anything else is the campaign file itself."""
    if not looks_like_zip(lines):
        yield lines, None
        return
    bundle = Bundle(lines)
    try:
        yield bundle.campaign_file, bundle
    finally:
        bundle.close()


@dataclass
class Resolved:
    """A checked media file: its kind and type by content, size and hash, and where to copy it from."""

    kind: str
    content_type: str
    size: int
    sha256: str
    fetched: object = None  # the temporary file of a remote src

    @property
    def name(self) -> str:
        return f"{self.sha256[:2]}/{self.sha256}{EXTENSIONS[self.content_type]}"


@dataclass
class MediaPlan:
    """What the import stores: per segment (by index in document order) and per document (by position) the
    entries with their new ids, and the files by `src`."""

    bundle: Bundle | None
    segments: dict[int, list[dict]] = field(default_factory=dict)
    documents: dict[int, list[dict]] = field(default_factory=dict)
    files: dict[str, Resolved] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.segments or self.documents)

    def segment_media(self, index: int) -> list[dict]:
        return self.segments.get(index, [])

    def write_files(self) -> None:
        """Copy every file into the media storage (those already there by their hash are kept)."""
        storage = media_storage()
        for src, resolved in self.files.items():
            if storage.exists(resolved.name):
                continue
            if resolved.fetched is not None:
                resolved.fetched.seek(0)
                saved = storage.save(resolved.name, File(resolved.fetched))
            else:
                with tempfile.TemporaryFile() as spool:
                    self.bundle.write_to(src, spool)
                    spool.seek(0)
                    saved = storage.save(resolved.name, File(spool))
            if saved != resolved.name:  # another import stored the same content meanwhile: keep theirs
                storage.delete(saved)
                continue
            self.written.append(saved)

    def remove_written(self) -> None:
        storage = media_storage()
        for name in self.written:
            if not MediaItem.objects.filter(name=name).exists():
                storage.delete(name)
        self.written.clear()

    def close(self) -> None:
        for resolved in self.files.values():
            if resolved.fetched is not None:
                resolved.fetched.close()

    def store(self, campaign, scanned, doc_pks) -> None:
        """The MediaItem rows and each document's `media` (what the annotator's read brings along)."""
        rows, docs_with_media = [], set(self.documents)
        per_doc_segments: dict[int, list[int]] = {}
        for i in range(len(scanned)):
            per_doc_segments.setdefault(scanned.docs[i], []).append(i)
            if i in self.segments:
                docs_with_media.add(scanned.docs[i])
        for index, entries in self.segments.items():
            rows += [self._row(campaign, doc_pks[scanned.docs[index]], scanned.seg_ids[index], e) for e in entries]
        for doc, entries in self.documents.items():
            rows += [self._row(campaign, doc_pks[doc], None, e) for e in entries]
        MediaItem.objects.bulk_create(rows, batch_size=1000)
        updates = []
        for doc in sorted(docs_with_media):
            members = per_doc_segments.get(doc, [])
            updates.append(Document(pk=doc_pks[doc], media={
                "document": self.documents.get(doc, []),
                "segments": [self.segments.get(i, []) for i in members],
                "seg_ids": [scanned.seg_ids[i] for i in members]}))
        Document.objects.bulk_update(updates, ["media"], batch_size=500)

    def _row(self, campaign, document_pk: int, seg_id: int | None, entry: dict) -> MediaItem:
        resolved = self.files[entry["src"]]
        return MediaItem(campaign=campaign, document_id=document_pk, seg_id=seg_id, key=entry["id"],
                         kind=entry["kind"], src=entry["src"], alt=entry.get("alt") or "",
                         caption=entry.get("caption") or "", name=resolved.name, content_type=resolved.content_type,
                         size=resolved.size)


def _resolve(src: str, bundle: Bundle | None, allow_remote: bool) -> Resolved | str:
    """The checked file `src` names, or why it is refused (a text naming it)."""
    if is_remote(src):
        if not allow_remote:
            return f"{src[:200]!r} is a remote URL; set fetch_remote_media to fetch it at import"
        try:
            fetched = fetch(src)
        except FetchError as exc:
            return f"{src[:200]!r} {exc}"
        found = sniff(fetched.head)
        if found is None:
            fetched.file.close()
            return f"{src[:200]!r} is not an image (PNG, JPEG, GIF, WebP), a video (MP4, WebM) or audio (MP3, OGG, " \
                   "WAV) by its content"
        return Resolved(found[0], found[1], fetched.size, fetched.sha256, fetched.file)
    if bundle is None:
        return f"{src[:200]!r}: media files come in a .zip bundle with the campaign file; this upload is not one"
    member = bundle.member(src)
    if member is None:
        return f"{src[:200]!r}: no such file in the bundle"
    found = sniff(member.head)
    if found is None:
        return f"{member.path!r} is not an image (PNG, JPEG, GIF, WebP), a video (MP4, WebM) or audio (MP3, OGG, " \
               "WAV) by its content"
    return Resolved(found[0], found[1], member.size, member.sha256)


def plan_media(scanned, bundle: Bundle | None, allow_remote: bool) -> MediaPlan:
    """Resolve and check every `media` and `doc_media` entry of a scanned (valid) campaign file; raises
    CampaignFileError with every refused file (named, with the document and segment that use it)."""
    plan = MediaPlan(bundle)
    problems = Problems()
    refused: dict[str, str] = {}
    doc_media_seen: dict[int, list] = {}
    try:
        for i in range(len(scanned)):
            record = scanned.record(i)
            media, doc_media = record.get("media"), record.get("doc_media")
            if not media and not doc_media:
                continue
            doc, where = scanned.docs[i], f"doc_id {scanned.doc_ids[scanned.docs[i]]!r} seg_id {scanned.seg_ids[i]}"
            if doc_media:
                if doc in doc_media_seen and doc_media_seen[doc] != doc_media:
                    problems.add(0, f"{where}: 'doc_media' differs from an earlier line's of the same document")
                    continue
                doc_media_seen[doc] = doc_media
            for key, entries in (("media", media or []), ("doc_media", doc_media or [])):
                if key == "doc_media" and doc in plan.documents:
                    continue
                kept = []
                for entry in entries:
                    src = entry["src"]
                    if src not in plan.files and src not in refused:
                        resolved = _resolve(src, bundle, allow_remote)
                        if isinstance(resolved, str):
                            refused[src] = resolved
                        else:
                            plan.files[src] = resolved
                    if src in refused:
                        problems.add(0, f"{where}: {refused[src]}")
                        continue
                    if plan.files[src].kind != entry["kind"]:
                        problems.add(0, f"{where}: {src[:200]!r} is {plan.files[src].content_type} by its content, "
                                        f"not {entry['kind']}")
                        continue
                    kept.append({"id": new_media_key(), "kind": entry["kind"], "src": src,
                                 "alt": entry.get("alt") or "", "caption": entry.get("caption") or ""})
                if kept and key == "media":
                    plan.segments[i] = kept
                elif kept:
                    plan.documents[doc] = kept
        if problems or problems.omitted:
            raise problems.refuse()
    except CampaignFileError:
        plan.close()
        raise
    return plan
