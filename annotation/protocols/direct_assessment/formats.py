"""The `wmt-da` format of judgments collected elsewhere (docs/api.md §5.1): WMT's published Direct Assessment
files, a header line `HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time`, then one
judgment a line, fields separated by tabs or spaces. Declared by the Direct Assessment protocols (`WMT_DA`)."""
from __future__ import annotations

import re
from collections.abc import Iterable

from annotation.building.campaign_files import CampaignFileError
from annotation.building.judgment_files import JudgmentFormat, JudgmentRow, ParsedJudgments, text_field
from annotation.building.text_lines import bounded_number, numbered_lines

WMT_DA_HEADER = ["HITId", "WorkerId", "Input.src", "Input.trg", "Input.item", "hit", "sys_id", "rid", "type", "sid",
                 "score", "time"]
WMT_DA_TYPES = {"SYSTEM": "system", "REPEAT": "repeat", "REF": "reference", "BAD_REF": "bad_ref"}
_SPACES = re.compile(r"[ \t]+")


def parse_wmt_da(lines: Iterable[bytes | str], protocol: str = "adequacy") -> ParsedJudgments:
    """WMT's published DA layout: a header line, then one judgment per line, fields separated by tabs or spaces."""
    errors: list[tuple[int, str]] = []
    rows: list[JudgmentRow] = []
    languages = ("", "")
    for number, raw in numbered_lines(lines, errors):
        fields = _SPACES.split(raw.strip())
        if number == 1:
            if fields != WMT_DA_HEADER:
                errors.append((1, "the header must be: " + " ".join(WMT_DA_HEADER)))
                break
            continue
        if fields == [""]:
            continue
        if len(fields) != len(WMT_DA_HEADER):
            errors.append((number, f"expected {len(WMT_DA_HEADER)} fields, found {len(fields)}"))
            continue
        record = dict(zip(WMT_DA_HEADER, fields, strict=True))
        try:
            item_type = WMT_DA_TYPES.get(record["type"])
            if item_type is None:
                raise ValueError(f"type must be one of {', '.join(WMT_DA_TYPES)}, not {record['type'][:40]!r}")
            if not re.fullmatch(r"-?\d{1,10}", record["sid"]) or abs(int(record["sid"])) >= 2**31:
                raise ValueError(f"sid must be an integer below 2^31, not {record['sid'][:20]!r}")
            rows.append(JudgmentRow(
                hit=text_field(record["HITId"], "HITId", 100), worker=text_field(record["WorkerId"], "WorkerId", 255),
                item_type=item_type,
                system=None if item_type == "reference" else text_field(record["sys_id"], "sys_id", 200),
                segment=int(record["sid"]),
                score=bounded_number(record["score"], "score", 0, 100, text=True),
                seconds=bounded_number(record["time"], "time", 0, 1e7, text=True),
            ))
            source, target = (text_field(record[f"Input.{k}"], f"Input.{k}", 255) for k in ("src", "trg"))
            languages = languages if languages[0] else (source, target)
        except ValueError as exc:
            errors.append((number, str(exc)))
    if not rows and not errors:
        errors.append((0, "the file has no judgments"))
    if errors:
        raise CampaignFileError(errors)
    return ParsedJudgments(rows=rows, protocol=protocol, source_language=languages[0][:16],
                           target_language=languages[1][:16])


#: The Direct Assessment protocols' judgment format; `protocol` (default adequacy) names the one judged.
WMT_DA = JudgmentFormat("wmt-da", parse_wmt_da, listed=0, protocols=("adequacy", "fluency", "source-adequacy"))
