"""What a screen shows beyond its item (the outputs of its segment, its document, the other items of its HIT),
read with the item. A protocol declares what its screen reads (`Protocol.screen_reads`, names below); the one
statement of annotation/services/judging_sql.py `read` then brings it along for the current and next items
(`ScreenContext`, set on the item), so that no strategy queries the database when a HIT is shown or answered.
Off the annotator path (the admin's preview, a test) an item read by the ORM has no context, and these functions
read the same rows with the ORM, in the same order."""
from __future__ import annotations

from dataclasses import dataclass

#: The outputs of the item's segment: [(system pk, text)], by system pk.
SEGMENT_OUTPUTS = "segment_outputs"
#: The segments of the item's document: [(segment pk, source, reference)], by seg_id.
DOCUMENT_SEGMENTS = "document_segments"
#: Every output of the item's document: [(segment pk, system pk, text, spans, output pk, system name)], by system pk.
DOCUMENT_OUTPUTS = "document_outputs"
#: The outputs of the item's output's system in its document: [(segment pk, output pk, text)], by seg_id.
DOCUMENT_SYSTEM_OUTPUTS = "document_system_outputs"
#: The other items of the item's HIT: [(text, payload)], by position.
OTHER_ITEMS = "other_items"
#: The items of the unit (payload `first`, `count`: positions of the HIT) an item belongs to, for items that have
#: one (document-level DA): [(item pk, text, output pk, output text, reference, source)], by position: its `count`
#: segment items, then its document item (at `first + count`; a document page answers it with them).
UNIT_ITEMS = "unit_items"
READS = (SEGMENT_OUTPUTS, DOCUMENT_SEGMENTS, DOCUMENT_OUTPUTS, DOCUMENT_SYSTEM_OUTPUTS, OTHER_ITEMS, UNIT_ITEMS)


@dataclass(frozen=True)
class ScreenContext:
    """What `read` brought along for one item: each entry is None when the item's protocol does not read it."""

    segment_outputs: list | None = None
    document_segments: list | None = None
    document_outputs: list | None = None
    document_system_outputs: list | None = None
    other_items: list | None = None
    unit_items: list | None = None


def _given(item, what: str):
    context = getattr(item, "screen_context", None)  # set by judging_sql.read, absent on an ORM-read item
    return None if context is None else getattr(context, what)


def segment_outputs(item) -> list[tuple[int, str]]:
    found = _given(item, SEGMENT_OUTPUTS)
    if found is not None:
        return found
    from annotation.models import SystemOutput

    return list(SystemOutput.objects.filter(segment_id=item.segment_id).order_by("system_id")
                .values_list("system_id", "text"))


def document_segments(item) -> list[tuple[int, str, str]]:
    found = _given(item, DOCUMENT_SEGMENTS)
    if found is not None:
        return found
    from annotation.models import Segment

    return list(Segment.objects.filter(document_id=item.segment.document_id).order_by("seg_id")
                .values_list("id", "source", "reference"))


def document_outputs(item) -> list[tuple[int, int, str, object, int, str]]:
    found = _given(item, DOCUMENT_OUTPUTS)
    if found is not None:
        return found
    from annotation.models import SystemOutput

    return list(SystemOutput.objects.filter(segment__document_id=item.segment.document_id).order_by("system_id")
                .values_list("segment_id", "system_id", "text", "spans", "id", "system__name"))


def document_system_outputs(item) -> list[tuple[int, int, str]]:
    found = _given(item, DOCUMENT_SYSTEM_OUTPUTS)
    if found is not None:
        return found
    if item.output_id is None:
        return []
    from annotation.models import SystemOutput

    return list(SystemOutput.objects.filter(segment__document_id=item.segment.document_id,
                                            system_id=item.output.system_id).order_by("segment__seg_id")
                .values_list("segment_id", "id", "text"))


def other_items(item) -> list[tuple[str, dict]]:
    found = _given(item, OTHER_ITEMS)
    if found is not None:
        return found
    from annotation.models import HitItem

    return list(HitItem.objects.filter(hit_id=item.hit_id).exclude(pk=item.pk).order_by("position")
                .values_list("text", "payload"))


def unit_items(item) -> list[tuple[int, str, int | None, str | None, str, str]]:
    found = _given(item, UNIT_ITEMS)
    if found is not None:
        return found
    from annotation.models import HitItem

    first, count = int(item.payload["first"]), int(item.payload["count"])
    return list(HitItem.objects.filter(hit_id=item.hit_id, position__gte=first, position__lte=first + count)
                .order_by("position").values_list("id", "text", "output_id", "output__text", "segment__reference",
                                                  "segment__source"))
