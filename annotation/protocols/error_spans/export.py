"""The error-span protocols' judgment-export formats (docs/api.md §6.4): `mqm-tsv` (Google's MQM layout) and
`esa-jsonl`, the formats their judgments are imported in (docs/api.md §5.4, §5.5), written so that the file re-imports
to the same judgments. Declared by the strategies (`Protocol.export_formats`); services/export.py offers them."""
import json
from collections.abc import Iterator

from annotation.building.judgment_files import ExportFormat
from annotation.building.media_records import exported
from annotation.models import Campaign, Judgment, Segment, SystemOutput

from .mqm_tsv import spreadsheet_safe

CHUNK = 2000

MQM_HEADER = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity", "comment")
_NO_ERROR = ("no-error", "no error")
_BREAKS = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def _field(text) -> str:
    """A TSV field: no quoting in Google's layout, so a tab or a line break becomes a space (one character for
    one: span offsets stay right)."""
    return str(text if text is not None else "").translate(_BREAKS)


def _cell(text) -> str:
    """A TSV field as written: formula-like text quoted with an apostrophe that the mqm-tsv import takes off."""
    return spreadsheet_safe(_field(text))


def _marked(text: str, start: int, end: int) -> str:
    return f"{text[:start]}<v>{text[start:end]}</v>{text[end:]}"


def single_judgments(campaign: Campaign):
    """The judgments of system outputs (quality-control copies and tutorial items left out), in storing order."""
    return (Judgment.objects.filter(campaign=campaign, item__item_type="system", item__output__isnull=False)
            .order_by("pk").values_list(
                "annotator__external_id", "annotator__user__username", "item__output__system__name",
                "item__segment__document__doc_id", "item__segment__document__domain", "item__segment__seg_id",
                "item__segment_id", "item__payload__seg_id", "item__segment__source", "item__output__text", "score",
                "spans", "item__payload__wave", "item__segment__media", "item__segment__document__media",
                "item__segment__instructions").iterator(chunk_size=CHUNK))


def _global_numbers(campaign: Campaign) -> dict[int, int]:
    """Each segment's number in the campaign (1-based, documents in order), for MQM's `seg_id` where the item
    does not keep one from an imported file."""
    ordered = Segment.objects.filter(campaign=campaign).order_by("document__position", "seg_id", "pk")
    return {pk: n for n, pk in enumerate(ordered.values_list("pk", flat=True).iterator(chunk_size=10_000), start=1)}


def mqm_tsv_lines(campaign: Campaign) -> Iterator[str]:
    """Google's MQM layout: a row per span, marked `<v>…</v>` in the source (`side` source) or the target; a
    `No-error` row for a judgment without spans; an error without a span (a zero-length span at the end of the
    translation) without marks."""
    yield "\t".join(MQM_HEADER) + "\n"
    if campaign.protocol_spec.contrastive:  # MQM side by side: a row per error of each column, with its system
        yield from _side_by_side_mqm_lines(campaign)
        return
    numbers = None
    for (external_id, username, system, doc, _domain, position, segment_id, global_id, source, target, _score,
         spans, _wave, _media, _doc_media, _instructions) in single_judgments(campaign):
        if global_id is None:
            numbers = numbers if numbers is not None else _global_numbers(campaign)
            global_id = numbers.get(segment_id, 0)
        source, target = _field(source), _field(target)
        head = f"{_cell(system)}\t{_cell(doc)}\t{position}\t{global_id}\t{_cell(external_id or username)}\t"
        yield from _mqm_rows(head, source, target, spans)


def _mqm_rows(head: str, source: str, target: str, spans: list[dict]) -> Iterator[str]:
    """One translation's MQM rows after the `head` fields: a row per span, or a `No-error` row."""
    if not spans:
        yield f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(target)}\tNo-error\tNo-error\t\n"
        return
    for span in spans:
        start, end, category = span["start"], span["end"], _field(span.get("category", ""))
        if span.get("side") == "source":
            shown_source, shown_target = _marked(source, start, end), target
        elif start == end == len(target) and category.lower() not in _NO_ERROR:
            shown_source, shown_target = source, target
        else:
            shown_source, shown_target = source, _marked(target, start, end)
        yield (f"{head}{spreadsheet_safe(shown_source)}\t{spreadsheet_safe(shown_target)}\t"
               f"{spreadsheet_safe(category)}\t{_cell(span['severity'])}\t\n")


def _side_by_side_mqm_lines(campaign: Campaign) -> Iterator[str]:
    """MQM side by side: each screen's system columns (the degraded copies left out), each column's errors as
    rows under its system, as if the column had been judged alone."""
    numbers = _global_numbers(campaign)
    judgments = (Judgment.objects.filter(campaign=campaign, item__item_type="system").order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__segment_id", "item__segment__document__doc_id",
        "item__segment__seg_id", "item__segment__source", "item__payload", "spans").iterator(chunk_size=CHUNK))
    chunk: list[tuple] = []
    for judgment in [*judgments, None]:
        if judgment is not None:
            chunk.append(judgment)
        if chunk and (judgment is None or len(chunk) == CHUNK):
            texts = {(segment, system): text for segment, system, text in SystemOutput.objects.filter(
                segment_id__in={j[2] for j in chunk}).values_list("segment_id", "system__name", "text")}
            for external_id, username, segment, doc, position, source, payload, spans in chunk:
                for candidate in (payload or {}).get("candidates", ()):
                    if candidate.get("kind") != "system":
                        continue
                    mine = [s for s in spans or () if s.get("candidate") == candidate.get("key")]
                    head = (f"{_cell(candidate.get('name'))}\t{_cell(doc)}\t{position}\t{numbers.get(segment, 0)}\t"
                            f"{_cell(external_id or username)}\t")
                    yield from _mqm_rows(head, _field(source), _field(texts.get((segment, candidate.get("name")), "")),
                                         mine)
            chunk = []


def _esa_spans(spans) -> list[dict]:
    return [{k: span[k] for k in ("start", "end", "severity", "category") if k in span} for span in spans or ()]


def _esa_line(system, doc, domain, seg_id, rater, score, spans, source, target, wave=None, media=None,
              doc_media=None, instructions="") -> str:
    record = {"system": system, "doc_id": doc, "seg_id": seg_id, "rater": rater, "score": score,
              "spans": _esa_spans(spans)}
    if isinstance(wave, int) and not isinstance(wave, bool) and wave != 1:  # the annotation wave; 1 by default
        record["wave"] = wave
    if domain:
        record["domain"] = domain
    if source:  # an empty text is one the imported file did not give: left out, it re-imports empty
        record["source"] = source
    if target:
        record["target"] = target
    if media:  # the segment's and the document's media (docs/api.md §2.1), as the campaign file gave them
        record["media"] = exported(media)
    if doc_media and doc_media.get("document"):
        record["doc_media"] = exported(doc_media["document"])
    if instructions:
        record["instructions"] = instructions
    return json.dumps(record, ensure_ascii=False) + "\n"


def esa_jsonl_lines(campaign: Campaign) -> Iterator[str]:
    """One JSON line per judged translation with its source and target, and its `wave` where the item keeps one
    other than 1 (contrastive ESA: one per candidate shown, the degraded copies left out)."""
    if "scores" in campaign.protocol_spec.export_columns:  # a score per candidate: several on one screen
        yield from _contrastive_lines(campaign)
        return
    for (external_id, username, system, doc, domain, seg_id, _segment, _global, source, target, score,
         spans, wave, media, doc_media, instructions) in single_judgments(campaign):
        yield _esa_line(system, doc, domain, seg_id, external_id or username, score, spans, source, target, wave,
                        media, doc_media, instructions)


def _contrastive_lines(campaign: Campaign) -> Iterator[str]:
    judgments = (Judgment.objects.filter(campaign=campaign, item__item_type="system").order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__segment_id", "item__segment__document__doc_id",
        "item__segment__document__domain", "item__segment__seg_id", "item__segment__source", "item__payload",
        "scores", "spans", "item__segment__media", "item__segment__document__media", "item__segment__instructions")
        .iterator(chunk_size=CHUNK))
    chunk: list[tuple] = []
    for judgment in judgments:
        chunk.append(judgment)
        if len(chunk) == CHUNK:
            yield from _contrastive_chunk(chunk)
            chunk = []
    yield from _contrastive_chunk(chunk)


def _contrastive_chunk(chunk: list[tuple]) -> Iterator[str]:
    texts = {(segment, system): text for segment, system, text in SystemOutput.objects.filter(
        segment_id__in={j[2] for j in chunk}).values_list("segment_id", "system__name", "text")}
    for (external_id, username, segment, doc, domain, seg_id, source, payload, scores, spans, media, doc_media,
         instructions) in chunk:
        scores = scores or {}
        for candidate in (payload or {}).get("candidates", ()):
            key = candidate.get("key")
            if candidate.get("kind") != "system" or key not in scores:
                continue
            mine = [s for s in spans or () if s.get("candidate") == key]
            yield _esa_line(candidate.get("name"), doc, domain, seg_id, external_id or username, scores[key], mine,
                            source, texts.get((segment, candidate.get("name")), ""), media=media,
                            doc_media=doc_media, instructions=instructions)


def _writes_mqm(spec) -> bool:
    """MQM needs spans with categories (the protocol declares `mqm`)."""
    return "spans" in spec.export_columns and spec.mqm


def _writes_esa(spec) -> bool:
    """ESA is written for the other protocols that declare spans (ESA, contrastive ESA)."""
    return "spans" in spec.export_columns and not spec.mqm


MQM_TSV = ExportFormat("mqm-tsv", mqm_tsv_lines, "text/tab-separated-values; charset=utf-8", "tsv", _writes_mqm)
ESA_JSONL = ExportFormat("esa-jsonl", esa_jsonl_lines, "application/x-ndjson; charset=utf-8", "jsonl", _writes_esa)
