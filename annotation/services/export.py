"""The streamed judgment export (docs/api.md §6.4, `GET /api/campaigns/<slug>/judgments/`): CSV and JSON for every
campaign, and the formats the registered protocols declare (`Protocol.export_formats`, e.g. error spans' `mqm-tsv`
and `esa-jsonl`)."""
import json
from collections.abc import Iterator, Mapping

from config.csv_export import csv_lines
from config.registry import LiveMapping

from ..building import instructions
from ..building.judgment_files import ExportFormat
from ..building.media_records import has_media, shown_media
from ..models import Campaign, HitItem, Judgment, TutorialTry
from ..protocols import all_protocols, declared_objects

COLUMNS = ["worker", "hit", "position", "item_type", "system", "doc_id", "seg_id", "score", "choice", "ranks", "z",
           "seconds", "created_at"]
_FIELDS = ["annotator__external_id", "annotator__user__username", "assignment__hit__number", "item__position",
           "item__item_type", "item__output__system__name", "item__segment__document__doc_id",
           "item__segment__seg_id", "score", "choice", "ranks", "seconds", "created_at"]
#: What an error-span judgment adds: its spans and per-candidate scores, the spans its output was shown with
#: (AI-prefilled) and the item's own text (a degraded copy, shown without them).
_SPAN_FIELDS = ["spans", "scores", "item__output__spans", "item__text"]
CHUNK = 2000
#: What a campaign with video or audio adds: the judge's media actions and seconds played (Judgment.media).
MEDIA_COLUMNS = ["media_actions", "media_seconds"]


#: What a campaign with tutorial items that carry an expected answer adds (docs/methods.md §12.5), on the judgments
#: of those items: the number of the try the judge moved on with (1 when right at once) and whether it was right.
TRAINING_COLUMNS = ["tutorial_tries", "tutorial_passed"]


def has_training(campaign: Campaign) -> bool:
    """Whether the campaign has tutorial items with an expected answer (its export then carries TRAINING_COLUMNS)."""
    return HitItem.objects.filter(hit__campaign=campaign, item_type="tutorial", payload__has_key="expected").exists()


def _final_tries(campaign: Campaign) -> dict[tuple[int, int], tuple[int, bool]]:
    """(attempt, passed) of each final tutorial try, by (assignment, item): one per tutorial judgment."""
    return {(a, i): (attempt, passed) for a, i, attempt, passed in TutorialTry.objects.filter(
        campaign=campaign, final=True).values_list("assignment_id", "item_id", "attempt", "passed")}


def has_clips(campaign: Campaign) -> bool:
    """Whether the campaign's items show video or audio (its export then carries MEDIA_COLUMNS)."""
    return campaign.media.filter(kind__in=("video", "audio")).exists()


#: Instructions (docs/api.md#instructions): the item's text, where a campaign has any, and the instruction judgment
#: (its answer and note; one per candidate key on screens of several), where the campaign asks it.
_INSTRUCTION_COLUMNS = ["instructions", "instruction", "instruction_note"]
#: What a judgment of a campaign with media adds: the media its item showed, [{kind, src}] (docs/api.md §6.4).
_MEDIA_FIELDS = ["item__segment__media", "item__segment__document__media"]


def _instruction_columns(campaign: Campaign) -> list[str]:
    if instructions.enabled(campaign.options):
        return _INSTRUCTION_COLUMNS
    return _INSTRUCTION_COLUMNS[:1] if campaign.segments.exclude(instructions="").exists() else []


def columns_for(campaign: Campaign) -> list[str]:
    """The export's columns: the documented ones (docs/api.md), the instruction columns where they apply, the
    protocol's own (e.g. sides), then `media` for a campaign with media, and the judge's media actions for one with
    video or audio."""
    return (COLUMNS + _instruction_columns(campaign) + list(campaign.protocol_spec.export_columns)
            + (["media"] if has_media(campaign) else []) + (MEDIA_COLUMNS if has_clips(campaign) else [])
            + (TRAINING_COLUMNS if has_training(campaign) else []))


def _instruction_values(judged: dict | None) -> tuple:
    """(answer, note) of a stored instruction judgment: plain for one translation, per key for several."""
    if not judged:
        return None, None
    if list(judged) == [instructions.SINGLE]:
        return judged[""]["answer"], judged[""]["note"] or None
    return {k: v["answer"] for k, v in judged.items()}, {k: v["note"] for k, v in judged.items() if v["note"]} or None


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
    clips = has_clips(campaign)
    shown = _instruction_columns(campaign)
    extra = [*extra, *("item__segment__instructions", "instruction")[:len(shown)]]
    at = {name: k for k, name in enumerate(extra)}
    media = _MEDIA_FIELDS if has_media(campaign) else []
    tries = _final_tries(campaign) if has_training(campaign) else None
    queryset = Judgment.objects.filter(campaign=campaign).order_by("pk").values_list(
        "assignment_id", "item_id", "annotator_id", "media", *_FIELDS, *extra, *payload_fields, *media)
    for (assignment_id, item_id, annotator_id, actions, external_id, username, hit, position, item_type, system,
         doc_id, seg_id, score, choice, ranks, seconds, created_at, *rest) in queryset.iterator(chunk_size=5000):
        if media:
            *rest, segment_media, document_media = rest
        mean_sd = standardise.get(annotator_id)
        z = (score - mean_sd[0]) / mean_sd[1] if mean_sd is not None and score is not None else None
        row = {
            "worker": external_id or username, "hit": hit, "position": position + 1, "item_type": item_type,
            "system": system, "doc_id": doc_id, "seg_id": seg_id, "score": score, "choice": choice or None,
            "ranks": ranks, "z": z, "seconds": seconds, "created_at": created_at.isoformat(),
        }
        payload = dict(zip(payload_keys, rest[len(extra):], strict=True))
        if shown:
            row["instructions"] = rest[at["item__segment__instructions"]] or None
        if "instruction" in at:
            row["instruction"], row["instruction_note"] = _instruction_values(rest[at["instruction"]])
        if answers:
            row["answer"] = rest[at["answer"]]
        if spans:
            judged_spans, scores, prefilled, item_text = rest[:len(_SPAN_FIELDS)]
            row["spans"] = judged_spans
            if "scores" in columns:
                row["scores"] = scores
            payload["prefilled"] = None if item_text else prefilled
        if payload_fields or spans:
            row.update(protocol.export_values(payload, campaign.options, row))
        if media:
            row["media"] = shown_media(segment_media, document_media)
        if clips:
            row["media_actions"] = actions["actions"] if actions else None
            row["media_seconds"] = actions["seconds"] if actions else None
        if tries is not None:
            row["tutorial_tries"], row["tutorial_passed"] = tries.get((assignment_id, item_id), (None, None))
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


def export_formats() -> dict[str, ExportFormat]:
    """Every export format the registered protocols declare (`Protocol.export_formats`), by name, in the order they
    are first declared (settings.MTEVAL_PROTOCOLS)."""
    return declared_objects("export_formats", ExportFormat, "export format")


#: Format name -> `ExportFormat`, beside csv and json; read live: a protocol added through the setting brings its own.
EXPORT_FORMATS: Mapping = LiveMapping(export_formats)


def export_format_problem(campaign: Campaign, fmt: str) -> str | None:
    """Why `campaign` cannot be exported in the declared format `fmt` (None if it can)."""
    writes = EXPORT_FORMATS[fmt].writes
    if writes(campaign.protocol_spec):
        return None
    names = [p.name for p in all_protocols() if writes(p)]
    return (f"format {fmt} writes campaigns of protocol {' or '.join(names)}; this one is {campaign.protocol} "
            "(use csv or json)")
