"""The streamed judgment export (docs/api.md §6.4, `GET /api/campaigns/<slug>/judgments/`): CSV and JSON for every
campaign, and for error-span campaigns the formats their judgments are imported in (docs/api.md §5.4, §5.5):
`mqm-tsv` (Google's MQM layout) and `esa-jsonl`, written so that the file re-imports to the same judgments."""
import json
from collections.abc import Callable, Iterator

from config.csv_export import csv_lines

from ..models import Campaign, Judgment, Segment, SystemOutput
from ..protocols import all_protocols
from ..protocols.error_spans.mqm_tsv import spreadsheet_safe

COLUMNS = ["worker", "hit", "position", "item_type", "system", "doc_id", "seg_id", "score", "choice", "ranks", "z",
           "seconds", "created_at"]
_FIELDS = ["annotator__external_id", "annotator__user__username", "assignment__hit__number", "item__position",
           "item__item_type", "item__output__system__name", "item__segment__document__doc_id",
           "item__segment__seg_id", "score", "choice", "ranks", "seconds", "created_at"]
#: What an error-span judgment adds: its spans and per-candidate scores, the spans its output was shown with
#: (AI-prefilled) and the item's own text (a degraded copy, shown without them).
_SPAN_FIELDS = ["spans", "scores", "item__output__spans", "item__text"]
CHUNK = 2000


def columns_for(campaign: Campaign) -> list[str]:
    """The export's columns: the documented ones (docs/api.md), then the protocol's own (e.g. sides)."""
    return COLUMNS + list(campaign.protocol_spec.export_columns)


def judgment_rows(campaign: Campaign, standardise: dict[int, tuple[float, float]] | None = None
                  ) -> Iterator[dict]:
    """Every judgment of the campaign as an export row, read in chunks (never all in memory).

    `standardise` maps an annotator id to the (mean, sample sd) of their scores; z is
    (score − mean) / sd (docs/methods.md §5), empty where the results have none. Error-span judgments carry
    `spans` (and `scores` where a screen shows several candidates); the protocol's `export_values` gets the
    item's payload keys and, for error spans, `prefilled`: the spans the judge was shown pre-marked (None if
    none were).
    """
    standardise = standardise or {}
    protocol = campaign.protocol_spec
    spans = "spans" in protocol.export_columns
    payload_keys = list(protocol.export_payload_keys)
    payload_fields = [f"item__payload__{key}" for key in payload_keys]
    extra = _SPAN_FIELDS if spans else []
    columns = set(protocol.export_columns)
    # a stage's answer (edits, verdicts, questions, …: Judgment.answer), where the protocol exports it
    answers = "answer" in columns
    extra = [*extra, "answer"] if answers else extra
    queryset = Judgment.objects.filter(campaign=campaign).order_by("pk").values_list(
        "annotator_id", *_FIELDS, *extra, *payload_fields)
    for (annotator_id, external_id, username, hit, position, item_type, system, doc_id, seg_id, score, choice, ranks,
         seconds, created_at, *rest) in queryset.iterator(chunk_size=5000):
        mean_sd = standardise.get(annotator_id)
        z = (score - mean_sd[0]) / mean_sd[1] if mean_sd is not None and score is not None else None
        row = {
            "worker": external_id or username, "hit": hit, "position": position + 1, "item_type": item_type,
            "system": system, "doc_id": doc_id, "seg_id": seg_id, "score": score, "choice": choice or None,
            "ranks": ranks, "z": z, "seconds": seconds, "created_at": created_at.isoformat(),
        }
        payload = dict(zip(payload_keys, rest[len(extra):], strict=True))
        if answers:
            row["answer"] = rest[len(extra) - 1]
        if spans:
            judged_spans, scores, prefilled, item_text = rest[:len(_SPAN_FIELDS)]
            row["spans"] = judged_spans
            if "scores" in columns:
                row["scores"] = scores
            payload["prefilled"] = None if item_text else prefilled
        if payload_fields or spans:
            row.update(protocol.export_values(payload, campaign.options, row))
        yield row


def as_csv(rows: Iterator[dict], columns: list[str]) -> Iterator[str]:
    """The export as CSV lines, lists and objects (ranks, spans) as JSON text, through the project's one CSV
    writer."""
    return csv_lines(columns, ({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                                for k, v in row.items()} for row in rows))


def as_json(rows: Iterator[dict]) -> Iterator[str]:
    yield "["
    first = True
    for row in rows:
        yield ("\n" if first else ",\n") + json.dumps(row, ensure_ascii=False)
        first = False
    yield "\n]\n"


# --------------------------------------------------------------------------- mqm-tsv and esa-jsonl

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


def _single_judgments(campaign: Campaign):
    """The judgments of system outputs (quality-control copies and tutorial items left out), in storing order."""
    return (Judgment.objects.filter(campaign=campaign, item__item_type="system", item__output__isnull=False)
            .order_by("pk").values_list(
                "annotator__external_id", "annotator__user__username", "item__output__system__name",
                "item__segment__document__doc_id", "item__segment__document__domain", "item__segment__seg_id",
                "item__segment_id", "item__payload__seg_id", "item__segment__source", "item__output__text", "score",
                "spans").iterator(chunk_size=CHUNK))


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
    numbers = None
    for (external_id, username, system, doc, _domain, position, segment_id, global_id, source, target, _score,
         spans) in _single_judgments(campaign):
        if global_id is None:
            numbers = numbers if numbers is not None else _global_numbers(campaign)
            global_id = numbers.get(segment_id, 0)
        source, target = _field(source), _field(target)
        head = f"{_cell(system)}\t{_cell(doc)}\t{position}\t{global_id}\t{_cell(external_id or username)}\t"
        if not spans:
            yield f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(target)}\tNo-error\tNo-error\t\n"
            continue
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


def _esa_spans(spans) -> list[dict]:
    return [{k: span[k] for k in ("start", "end", "severity", "category") if k in span} for span in spans or ()]


def _esa_line(system, doc, domain, seg_id, rater, score, spans, source, target) -> str:
    record = {"system": system, "doc_id": doc, "seg_id": seg_id, "rater": rater, "score": score,
              "spans": _esa_spans(spans)}
    if domain:
        record["domain"] = domain
    if source:  # an empty text is one the imported file did not give: left out, it re-imports empty
        record["source"] = source
    if target:
        record["target"] = target
    return json.dumps(record, ensure_ascii=False) + "\n"


def esa_jsonl_lines(campaign: Campaign) -> Iterator[str]:
    """One JSON line per judged translation with its source and target (contrastive ESA: one per candidate
    shown, the degraded copies left out)."""
    if "scores" in campaign.protocol_spec.export_columns:  # a score per candidate: several on one screen
        yield from _contrastive_lines(campaign)
        return
    for (external_id, username, system, doc, domain, seg_id, _segment, _global, source, target, score,
         spans) in _single_judgments(campaign):
        yield _esa_line(system, doc, domain, seg_id, external_id or username, score, spans, source, target)


def _contrastive_lines(campaign: Campaign) -> Iterator[str]:
    judgments = (Judgment.objects.filter(campaign=campaign, item__item_type="system").order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__segment_id", "item__segment__document__doc_id",
        "item__segment__document__domain", "item__segment__seg_id", "item__segment__source", "item__payload",
        "scores", "spans").iterator(chunk_size=CHUNK))
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
    for external_id, username, segment, doc, domain, seg_id, source, payload, scores, spans in chunk:
        scores = scores or {}
        for candidate in (payload or {}).get("candidates", ()):
            key = candidate.get("key")
            if candidate.get("kind") != "system" or key not in scores:
                continue
            mine = [s for s in spans or () if s.get("candidate") == key]
            yield _esa_line(candidate.get("name"), doc, domain, seg_id, external_id or username, scores[key], mine,
                            source, texts.get((segment, candidate.get("name")), ""))


def _categorised(spec) -> bool:
    """Whether the protocol's spans carry an MQM category (it declares `mqm`, and then names a taxonomy)."""
    return spec.mqm


def _writes_mqm(spec) -> bool:
    return "spans" in spec.export_columns and _categorised(spec)


def _writes_esa(spec) -> bool:
    return "spans" in spec.export_columns and not _categorised(spec)


#: The error-span formats: name -> (which protocols' campaigns it writes, writer, content type, file suffix). MQM
#: needs spans with categories (MQM), ESA is written for the other protocols that declare spans (ESA, contrastive).
SPAN_FORMATS: dict[str, tuple[Callable, Callable[[Campaign], Iterator[str]], str, str]] = {
    "mqm-tsv": (_writes_mqm, mqm_tsv_lines, "text/tab-separated-values; charset=utf-8", "tsv"),
    "esa-jsonl": (_writes_esa, esa_jsonl_lines, "application/x-ndjson; charset=utf-8", "jsonl"),
}


def span_format_problem(campaign: Campaign, fmt: str) -> str | None:
    """Why `campaign` cannot be exported as the error-span format `fmt` (None if it can)."""
    writes = SPAN_FORMATS[fmt][0]
    if writes(campaign.protocol_spec):
        return None
    names = [p.name for p in all_protocols() if writes(p)]
    return (f"format {fmt} writes campaigns of protocol {' or '.join(names)}; this one is {campaign.protocol} "
            "(use csv or json)")
