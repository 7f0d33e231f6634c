"""The streamed judgment export (docs/api.md, `GET /api/campaigns/<slug>/judgments/`)."""
import json
from collections.abc import Iterator

from annotation.models import Campaign, Judgment

from .csv_export import csv_lines

COLUMNS = ["worker", "hit", "position", "item_type", "system", "doc_id", "seg_id", "score", "choice", "ranks", "z",
           "seconds", "created_at"]
_FIELDS = ["annotator__external_id", "annotator__user__username", "assignment__hit__number", "item__position",
           "item__item_type", "item__output__system__name", "item__segment__document__doc_id",
           "item__segment__seg_id", "score", "choice", "ranks", "seconds", "created_at"]


def columns_for(campaign: Campaign) -> list[str]:
    """The export's columns: the documented ones (docs/api.md), then the protocol's own (e.g. sides)."""
    return COLUMNS + list(campaign.protocol_spec.export_columns)


def judgment_rows(campaign: Campaign, standardise: dict[int, tuple[float, float]] | None = None
                  ) -> Iterator[dict]:
    """Every judgment of the campaign as an export row, read in chunks (never all in memory).

    `standardise` maps an annotator id to the (mean, sample sd) of their scores; z is
    (score − mean) / sd (docs/methods.md §5), empty where the results have none.
    """
    standardise = standardise or {}
    protocol = campaign.protocol_spec
    payload_fields = [f"item__payload__{key}" for key in protocol.export_payload_keys]
    queryset = Judgment.objects.filter(campaign=campaign).order_by("pk").values_list(
        "annotator_id", *_FIELDS, *payload_fields)
    for (annotator_id, external_id, username, hit, position, item_type, system, doc_id, seg_id, score, choice, ranks,
         seconds, created_at, *payload) in queryset.iterator(chunk_size=5000):
        mean_sd = standardise.get(annotator_id)
        z = (score - mean_sd[0]) / mean_sd[1] if mean_sd is not None and score is not None else None
        row = {
            "worker": external_id or username, "hit": hit, "position": position + 1, "item_type": item_type,
            "system": system, "doc_id": doc_id, "seg_id": seg_id, "score": score, "choice": choice or None,
            "ranks": ranks, "z": z, "seconds": seconds, "created_at": created_at.isoformat(),
        }
        if payload_fields:
            row.update(protocol.export_values(dict(zip(protocol.export_payload_keys, payload, strict=True)),
                                              campaign.options, row))
        yield row


def as_csv(rows: Iterator[dict], columns: list[str]) -> Iterator[str]:
    """The export as CSV lines, ranks as JSON text, through the project's one CSV writer."""
    return csv_lines(columns, ({**row, "ranks": json.dumps(row["ranks"]) if row["ranks"] is not None else None}
                               for row in rows))


def as_json(rows: Iterator[dict]) -> Iterator[str]:
    yield "["
    first = True
    for row in rows:
        yield ("\n" if first else ",\n") + json.dumps(row, ensure_ascii=False)
        first = False
    yield "\n]\n"
