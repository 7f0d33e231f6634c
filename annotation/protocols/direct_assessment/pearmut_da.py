"""Pearmut's annotation log of a DA campaign (docs/api.md §5.8, `pearmut-da`): the lines of Pearmut's export whose
annotations hold a `score` and no spans, `{"user_id", "item_i", "item"?: [...], "annotation": [{model: {"score"}}]}`,
imported into a Direct Assessment campaign (`protocol`, default source-adequacy) and written back
(`pearmut-da-jsonl`) so that the file re-imports to the same judgments. A segment is the pair (`item_i`, its place
in `annotation` from 1), kept in the item's payload; texts are not kept."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import CampaignFileError
from annotation.building.json_records import json_records
from annotation.building.judgment_files import ExportFormat, JudgmentFormat, JudgmentRow, ParsedJudgments, text_field
from annotation.building.text_lines import bounded_number
from annotation.models import Campaign, Judgment


def _name(value, what: str, longest: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"'{what}' must be a text")
    return text_field(value, f"'{what}'", longest)


def parse_pearmut_da(lines: Iterable[bytes | str], protocol: str = "source-adequacy") -> ParsedJudgments:
    """Validate a Pearmut DA log; every bad line is named."""
    errors: list[tuple[int, str]] = []
    rows: list[JudgmentRow] = []
    segments: dict[tuple[str, int], int] = {}
    for number, record in json_records(lines, errors):
        try:
            rows.extend(_record(record, segments))
        except ValueError as exc:
            errors.append((number, str(exc)))
    if not rows and not errors:
        errors.append((0, "the file has no judgments"))
    if errors:
        raise CampaignFileError(errors)
    return ParsedJudgments(rows=rows, protocol=protocol)


def _record(record, segments: dict[tuple[str, int], int]) -> list[JudgmentRow]:
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    for key in ("user_id", "item_i", "annotation"):
        if key not in record:
            raise ValueError(f"'{key}' is missing")
    rater, item = _name(record["user_id"], "user_id", 255), _name(record["item_i"], "item_i", 200)
    annotation = record["annotation"]
    annotation = [annotation] if isinstance(annotation, dict) else annotation
    if not isinstance(annotation, list):
        raise ValueError("'annotation' must be a list of objects")
    rows = []
    for position, judged in enumerate(annotation, start=1):
        if judged is None:
            continue
        if not isinstance(judged, dict):
            raise ValueError(f"segment {position}: the annotation must be an object")
        segment = segments.setdefault((item, position), len(segments) + 1)
        for model, answer in judged.items():
            where = f"segment {position}, model {model[:40]!r}"
            if not isinstance(answer, dict) or "score" not in answer:
                raise ValueError(f"{where}: needs a 'score'")
            if answer.get("error_spans"):
                raise ValueError(f"{where}: has error spans; import the log with format pearmut (esa or mqm)")
            rows.append(JudgmentRow(
                hit=f"pearmut:{item}"[:100], worker=rater, item_type="system", system=_name(model, "model", 200),
                segment=segment, score=bounded_number(answer["score"], f"{where}: 'score'", 0, 100),
                payload={"item_i": record["item_i"], "position": position}))
    return rows


def pearmut_da_lines(campaign: Campaign) -> Iterator[str]:
    """The campaign's system judgments as Pearmut's log, a line per rater and item (a document here)."""
    lines: dict[tuple[str, object], dict[int, dict]] = {}
    rows = (Judgment.objects.filter(campaign=campaign, item__item_type="system", score__isnull=False).order_by("pk")
            .values_list("annotator__external_id", "annotator__user__username", "item__output__system__name",
                         "item__segment__document__doc_id", "item__segment__seg_id", "score", "item__payload"))
    for external_id, username, system, doc, seg_id, score, payload in rows.iterator(chunk_size=2000):
        payload = payload or {}
        item, position = payload.get("item_i", doc), payload.get("position", seg_id)
        key = (external_id or username, json.dumps(item))
        lines.setdefault(key, {}).setdefault(position, {})[system] = {"score": score}
    for (rater, item), segments in lines.items():
        yield json.dumps({"user_id": rater, "item_i": json.loads(item), "annotation": [
            segments.get(n) for n in range(1, max(segments) + 1)]}, ensure_ascii=False) + "\n"


def _writes(spec) -> bool:
    return spec.family == "direct-assessment"


#: The Direct Assessment protocols' Pearmut format; `protocol` (default source-adequacy) names the one judged.
PEARMUT_DA = JudgmentFormat("pearmut-da", parse_pearmut_da, listed=10,
                            protocols=("source-adequacy", "adequacy", "fluency"))
PEARMUT_DA_JSONL = ExportFormat("pearmut-da-jsonl", pearmut_da_lines, "application/x-ndjson; charset=utf-8", "jsonl",
                                _writes)
