"""The `pairwise-csv` format of judgments collected elsewhere (docs/api.md): header
`rater,criterion,unit,item,choice,spam`; `choice` is the preferred system (one of the two
given with --systems) or `tie`; `spam` names the corrupted system on a spam item. One judgment a line: each
line is read on its own (text_lines.csv_fields), so a refusal names the line."""
from __future__ import annotations

from collections.abc import Iterable

from annotation.building.campaign_files import CampaignFileError
from annotation.building.judgment_files import JudgmentFormat, JudgmentRow, ParsedJudgments, text_field
from annotation.building.text_lines import csv_fields, numbered_lines

HEADER = ["rater", "criterion", "unit", "item", "choice", "spam"]
CRITERIA = ("adequacy", "fluency")
UNITS = ("document", "sentence")
#: The protocol that judges each criterion (the names pairwise/strategy.py gives its protocols).
PROTOCOL_OF_CRITERION = {"adequacy": "pairwise-adequacy", "fluency": "pairwise-fluency"}


def parse_pairwise_csv(lines: Iterable[bytes | str], systems: list[str] | None = None) -> ParsedJudgments:
    """Validate a pairwise-csv file; `systems` = [A, B], the two systems compared (A is "first")."""
    errors: list[tuple[int, str]] = []
    if not systems or len(systems) != 2 or systems[0] == systems[1]:
        raise CampaignFileError([(0, "systems: pairwise-csv needs the two systems compared, e.g. A,B")])
    rows: list[JudgmentRow] = []
    criteria, units = set(), set()
    for number, text in numbered_lines(lines, errors):
        try:
            record = csv_fields(text.rstrip("\r\n"))
        except ValueError as exc:
            errors.append((number, str(exc)))
            record = None
        if number == 1:
            if record != HEADER:
                errors.append((1, "the header must be: " + ",".join(HEADER)))
                raise CampaignFileError(sorted(set(errors)))
            continue
        if not record or not any(record):
            continue
        if len(record) != len(HEADER):
            errors.append((number, f"expected {len(HEADER)} fields, found {len(record)}"))
            continue
        rater, criterion, unit, item, choice, spam = record
        problems = []
        if not rater:
            problems.append("rater is empty")
        if criterion not in CRITERIA:
            problems.append(f"criterion must be adequacy or fluency, not {criterion[:40]!r}")
        if unit not in UNITS:
            problems.append(f"unit must be document or sentence, not {unit[:40]!r}")
        if not item:
            problems.append("item is empty")
        for value, what, longest in ((rater, "rater", 255), (item, "item", 200)):
            try:
                text_field(value, what, longest)
            except ValueError as exc:
                problems.append(str(exc))
        if choice not in (*systems, "tie"):
            problems.append(f"choice must be {systems[0]}, {systems[1]} or tie, not {choice[:40]!r}")
        if spam and spam not in systems:
            problems.append(f"spam must be empty or name {systems[0]} or {systems[1]}, not {spam[:40]!r}")
        if problems:
            errors.extend((number, p) for p in problems)
            continue
        criteria.add(criterion)
        units.add(unit)
        rows.append(JudgmentRow(
            hit=f"{criterion}/{unit}", worker=rater, item_type="spam" if spam else "system", system=None,
            segment=None, choice={systems[0]: "A", systems[1]: "B"}.get(choice, "tie"),
            payload={"unit": unit, "criterion": criterion, "key": f"{unit}:{item}", "doc_id": item, "left": 0,
                     "spam_side": {systems[0]: "A", systems[1]: "B"}.get(spam)},
        ))
    if not rows and not errors:
        errors.append((0, "the file has no judgments"))
    if errors:
        raise CampaignFileError(errors)
    protocol = _protocol_judging(criteria)
    unit = units.pop() if len(units) == 1 else "both"
    return ParsedJudgments(rows=rows, protocol=protocol, options={
        "systems": list(systems), "unit": unit, "criteria": sorted(criteria)})


def _protocol_judging(criteria: set[str]) -> str:
    """The pairwise protocol of the file's one criterion; the first criterion's (adequacy) when it has both."""
    return PROTOCOL_OF_CRITERION[next(iter(criteria)) if len(criteria) == 1 else CRITERIA[0]]


#: The pairwise protocols' judgment format.
PAIRWISE_CSV = JudgmentFormat("pairwise-csv", parse_pairwise_csv, listed=4,
                              protocols=tuple(PROTOCOL_OF_CRITERION.values()))
