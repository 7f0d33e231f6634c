"""Appraise's Direct Assessment scores (docs/api.md §5.11): `manage.py ExportSystemScoresToCSV CAMPAIGN`, CSV
without a header, one judgment a line: `username,systemID,segmentID,itemType,sourceLanguage,targetLanguage,score,
startTime,endTime` (and `batchNo,itemID` with `--batch-info`). `itemType` TGT is a system's translation, CHK a
repeat, BAD a degraded copy (bad reference), REF a reference: the same controls WMT's DA files carry. Imported
directly into a Direct Assessment campaign (`protocol`, default source-adequacy, Appraise's source-based DA), and
written back (`appraise-da-csv`) so that the file re-imports to the same judgments."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import CampaignFileError
from annotation.building.judgment_files import ExportFormat, JudgmentFormat, JudgmentRow, ParsedJudgments, text_field
from annotation.building.text_lines import bounded_number, csv_fields, numbered_lines
from annotation.models import Campaign, Judgment

COLUMNS = ("username", "systemID", "segmentID", "itemType", "sourceLanguage", "targetLanguage", "score",
           "startTime", "endTime")
BATCH = ("batchNo", "itemID")
TYPES = {"TGT": "system", "CHK": "repeat", "BAD": "bad_ref", "REF": "reference"}
APPRAISE_TYPES = {v: k for k, v in TYPES.items()}
#: Times are seconds since 1970; the latest accepted (year 5138).
LATEST = 1e11


def parse_appraise_da_csv(lines: Iterable[bytes | str], protocol: str = "source-adequacy") -> ParsedJudgments:
    """Validate Appraise's DA CSV scores, one judgment a line (each line read on its own)."""
    errors: list[tuple[int, str]] = []
    rows: list[JudgmentRow] = []
    languages = ("", "")
    for number, text in numbered_lines(lines, errors):
        try:
            fields = csv_fields(text.rstrip("\r\n"))
        except ValueError as exc:
            errors.append((number, str(exc)))
            continue
        if not any(fields):
            continue
        if len(fields) not in (len(COLUMNS), len(COLUMNS) + len(BATCH)):
            errors.append((number, f"expected {len(COLUMNS)} fields ({','.join(COLUMNS)}), or "
                                   f"{len(COLUMNS) + len(BATCH)} with batchNo,itemID; found {len(fields)}"))
            if number == 1:  # the first line is not Appraise's layout (another delimiter, another file): stop
                break
            continue
        record = dict(zip(COLUMNS + BATCH, fields, strict=False))
        try:
            rows.append(_row(record))
            pair = tuple(text_field(record[k], k, 16) for k in ("sourceLanguage", "targetLanguage"))
            languages = languages if languages[0] else pair
        except ValueError as exc:
            errors.append((number, str(exc)))
    if not rows and not errors:
        errors.append((0, "the file has no judgments"))
    if errors:
        raise CampaignFileError(errors)
    return ParsedJudgments(rows=rows, protocol=protocol, source_language=languages[0],
                           target_language=languages[1])


def _row(record: dict) -> JudgmentRow:
    item_type = TYPES.get(record["itemType"])
    if item_type is None:
        raise ValueError(f"itemType must be one of {', '.join(TYPES)}, not {record['itemType'][:40]!r}")
    segment = bounded_number(record["segmentID"], "segmentID", 0, 2**31 - 1, text=True)
    if segment != int(segment):
        raise ValueError(f"segmentID must be a whole number, not {record['segmentID'][:20]!r}")
    start = bounded_number(record["startTime"], "startTime", 0, LATEST, text=True)
    end = bounded_number(record["endTime"], "endTime", start, LATEST, text=True)
    system = text_field(record["systemID"], "systemID", 200)
    if not system:
        raise ValueError("systemID is empty")
    batch = text_field(record.get("batchNo", ""), "batchNo", 100)
    payload = {"start_time": record["startTime"], "end_time": record["endTime"]}
    if "itemID" in record:
        payload["batch"] = [batch, text_field(record["itemID"], "itemID", 100)]
    if item_type == "reference":  # references belong to no system; the reference's name is kept
        payload["reference"] = system
    worker = text_field(record["username"], "username", 255)
    if not worker:
        raise ValueError("username is empty")
    return JudgmentRow(hit=batch or "appraise", worker=worker, item_type=item_type,
                       system=None if item_type == "reference" else system, segment=int(segment),
                       score=bounded_number(record["score"], "score", 0, 100, text=True), seconds=end - start,
                       payload=payload)


def appraise_da_lines(campaign: Campaign) -> Iterator[str]:
    """A Direct Assessment campaign's judgments as Appraise's CSV (no header), in storing order."""
    judgments = (Judgment.objects.filter(campaign=campaign, score__isnull=False).order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__output__system__name", "item__segment__seg_id",
        "item__item_type", "score", "seconds", "item__payload").iterator(chunk_size=2000))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for external_id, username, system, seg_id, item_type, score, seconds, payload in judgments:
        payload = payload or {}
        writer.writerow([external_id or username, system or payload.get("reference", "ref"), seg_id,
                         APPRAISE_TYPES.get(item_type, "TGT"), campaign.source_language, campaign.target_language,
                         f"{score:g}", payload.get("start_time", "0"), payload.get("end_time", f"{seconds or 0:g}"),
                         *(payload.get("batch") or [])])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def _writes(spec) -> bool:
    return spec.family == "direct-assessment"


#: The Direct Assessment protocols' Appraise format; `protocol` (default source-adequacy) names the one judged.
APPRAISE_DA_CSV = JudgmentFormat("appraise-da-csv", parse_appraise_da_csv, listed=9,
                                 protocols=("source-adequacy", "adequacy", "fluency"))
APPRAISE_DA_CSV_EXPORT = ExportFormat("appraise-da-csv", appraise_da_lines, "text/csv; charset=utf-8", "csv", _writes)
