"""Google Anthea's evaluation data files (docs/api.md §5.10), one rater's MQM evaluation each, imported into an
`mqm` campaign and written back (`anthea-jsonl`).

A file is one JSON object (or JSON Lines of them): `raterId`, `parameters` (`source_language`,
`target_language`), `parsedDocSys` (`doc`, `sys`, `srcSegments`, `tgtSegments`, a segment each; blank source
segments are paragraph breaks and get no result) and `results`, one per non-blank segment in order: `visited`,
`errors` (`location` translation or source, `prefix` and `selected` — the text before the error and the error's
text, from which the half-open code-point span is taken —, `type`, `subtype`, `severity`, `marked_deleted`),
`prior_rater`. An error marked deleted and the result's prior rater are kept in the item's payload
(`anthea_deleted`, `anthea_prior_rater`): the first pass a later review starts from; they are not spans of the
judgment. Unvisited segments are not judgments."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import Problems, unstorable
from annotation.building.json_records import json_records
from annotation.building.judgment_files import ExportFormat, JudgmentFormat
from annotation.building.spans import DEFAULT_MQM_TAXONOMY, SEVERITIES, SpanError
from annotation.building.text_lines import numbered_lines
from annotation.models import Campaign, Judgment, SystemOutput

from .esa_jsonl import check_esa_spans
from .store import MAX_CATEGORY, MAX_NAME, MAX_RATER, Collected, ErrorSpanJudgments, checked_name, parsed_error_spans

LOCATIONS = ("translation", "source")


def _records(lines: Iterable[bytes | str], problems: Problems) -> Iterator[tuple[int, object]]:
    """One pretty-printed evaluation object (Anthea's download), or JSON Lines of them."""
    numbered = list(numbered_lines(lines, problems))
    text = "".join(t for _, t in numbered)
    try:
        whole = json.loads(text)
    except ValueError:
        yield from json_records([t for _, t in numbered], problems)
        return
    yield from ((1, one) for one in (whole if isinstance(whole, list) else [whole]))


def _name(value, what: str, longest: int) -> str:
    if not isinstance(value, str) or unstorable(value):
        raise ValueError(f"'{what}' must be a text")
    return checked_name(value, f"'{what}'", longest)


def _span(error, src: str, tgt: str, where: str) -> dict:
    """An Anthea error as a half-open span (with `side`, `location` kept); ValueError if inconsistent."""
    if not isinstance(error, dict):
        raise ValueError(f"{where}: must be an object")
    location = error.get("location", "translation")
    if location not in LOCATIONS:
        raise ValueError(f"{where}: 'location' must be translation or source, not {str(location)[:40]!r}")
    prefix, selected = error.get("prefix"), error.get("selected")
    if not isinstance(prefix, str) or not isinstance(selected, str):
        raise ValueError(f"{where}: 'prefix' and 'selected' must be texts")
    text = src if location == "source" else tgt
    start = len(prefix)
    if not text.startswith(prefix + selected):
        raise ValueError(f"{where}: 'prefix' and 'selected' do not match the {location}'s text")
    severity = str(error.get("severity", "")).lower()
    if severity not in SEVERITIES:
        raise ValueError(f"{where}: 'severity' must be one of {', '.join(SEVERITIES)}, not "
                         f"{str(error.get('severity'))[:40]!r}")
    kind, subtype = error.get("type"), error.get("subtype")
    if not isinstance(kind, str) or not kind or (subtype is not None and not isinstance(subtype, str)):
        raise ValueError(f"{where}: 'type' (and 'subtype') must be texts")
    category = f"{kind}/{subtype}" if subtype else kind
    if len(category) > MAX_CATEGORY:
        raise ValueError(f"{where}: 'type'/'subtype' is at most {MAX_CATEGORY} characters")
    span = {"start": start, "end": start + len(selected), "severity": severity, "category": category}
    return {**span, "location": location}


def parse_anthea(lines: Iterable[bytes | str]) -> ErrorSpanJudgments:
    """Validate Anthea evaluation files (one rater each) into an mqm campaign."""
    problems = Problems()
    c = Collected()
    seen_any, languages = False, ("", "")
    for number, record in _records(lines, problems):
        seen_any = True
        try:
            languages = _evaluation(c, record) or languages
        except (ValueError, SpanError) as exc:
            problems.append((number, str(exc)))
    return parsed_error_spans(c, problems, empty=not seen_any, fmt="anthea", protocol="mqm", languages=languages,
                              options={"taxonomy": _taxonomy(c)})


def _taxonomy(c: Collected) -> list[str]:
    """The default MQM taxonomy extended by the file's categories it lacks (kept and deleted errors alike, e.g.
    Anthea's `Style/Awkward`), so that the campaign and its review stage take every category the file holds."""
    deleted = (span.get("category") for extra in c.j_extra.values() for span in extra.get("anthea_deleted") or ())
    found = dict.fromkeys([*c.categories, *deleted])
    return [*DEFAULT_MQM_TAXONOMY, *(name for name in found if name and name not in DEFAULT_MQM_TAXONOMY)]


def _evaluation(c: Collected, record) -> tuple[str, str] | None:
    if not isinstance(record, dict):
        raise ValueError("an evaluation must be a JSON object")
    for key in ("raterId", "parsedDocSys", "results"):
        if key not in record:
            raise ValueError(f"'{key}' is missing")
    rater = c.rater(_name(record["raterId"], "raterId", MAX_RATER))
    results, docsys_list = record["results"], record["parsedDocSys"]
    if not isinstance(results, list) or not isinstance(docsys_list, list):
        raise ValueError("'parsedDocSys' and 'results' must be lists")
    index = 0
    for d, docsys in enumerate(docsys_list):
        if not isinstance(docsys, dict):
            raise ValueError(f"parsedDocSys[{d}] must be an object")
        doc = c.document(_name(docsys.get("doc"), f"parsedDocSys[{d}].doc", MAX_NAME))
        system = _name(docsys.get("sys"), f"parsedDocSys[{d}].sys", MAX_NAME)
        sources, targets = docsys.get("srcSegments"), docsys.get("tgtSegments")
        if not isinstance(sources, list) or not isinstance(targets, list) or len(sources) != len(targets) or not all(
                isinstance(t, str) and not unstorable(t) for t in (*sources, *targets)):
            raise ValueError(f"parsedDocSys[{d}]: 'srcSegments' and 'tgtSegments' must be lists of texts, as long")
        number = 0
        for src, tgt in zip(sources, targets, strict=True):
            if not src:
                continue
            number += 1
            if index >= len(results):
                raise ValueError(f"'results' has {len(results)} entries, fewer than the non-blank segments")
            result, where = results[index], f"results[{index}]"
            index += 1
            if not isinstance(result, dict):
                raise ValueError(f"{where} must be an object")
            segment = c.segment(doc, number, src, 0)
            output = c.output(system, segment, tgt, 0)
            if not result.get("visited"):
                continue
            kept, deleted = [], []
            for e, error in enumerate(result.get("errors") or []):
                span = _span(error, src, tgt, f"{where}.errors[{e}]")
                (deleted if isinstance(error, dict) and error.get("marked_deleted") else kept).append(span)
            target_spans = check_esa_spans([_plain(s) for s in kept if s["location"] == "translation"], tgt)
            source_spans = check_esa_spans([_plain(s) for s in kept if s["location"] == "source"], src)
            judgment = c.new_judgment(output, rater, 0)
            extra = {}
            if result.get("prior_rater"):
                extra["anthea_prior_rater"] = _name(result["prior_rater"], f"{where}.prior_rater", MAX_RATER)
            if deleted:
                extra["anthea_deleted"] = deleted
            if extra:
                c.j_extra[judgment] = extra
            for span in target_spans:
                c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"))
            for span in source_spans:
                c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"), True)
    if index != len(results):
        raise ValueError(f"'results' has {len(results)} entries for {index} non-blank segments")
    parameters = record.get("parameters") or {}
    pair = parameters.get("source_language"), parameters.get("target_language")
    return pair if all(isinstance(p, str) and 0 < len(p) <= 16 for p in pair) else None


def _plain(span: dict) -> dict:
    return {k: span[k] for k in ("start", "end", "severity", "category")}


def anthea_lines(campaign: Campaign) -> Iterator[str]:
    """An Anthea evaluation object a line, one per rater: every document and system the rater judged, each
    segment a result (visited where judged)."""
    rows = (Judgment.objects.filter(campaign=campaign, item__item_type="system", item__output__isnull=False)
            .order_by("pk").values_list("annotator__external_id", "annotator__user__username", "item__output_id",
                                        "item__output__system__name", "item__segment__document_id",
                                        "item__segment__document__doc_id", "spans", "item__payload"))
    raters: dict[str, dict[tuple, dict]] = {}
    for external_id, username, output, system, document, doc, spans, payload in rows.iterator(chunk_size=2000):
        raters.setdefault(external_id or username, {}).setdefault((document, doc, system), {})[output] = (
            spans or [], payload or {})
    for rater, docsys in raters.items():
        parsed, results = [], []
        for (document, doc, system), judged in docsys.items():
            outputs = (SystemOutput.objects.filter(segment__document_id=document, system__name=system,
                                                   campaign=campaign)
                       .order_by("segment__seg_id").values_list("pk", "segment__source", "text"))
            sources, targets = [], []
            for output, src, tgt in outputs:
                sources.append(src)
                targets.append(tgt)
                spans, payload = judged.get(output, (None, {}))
                result = {"visited": spans is not None, "errors": [
                    _error(s, src, tgt) for s in spans or ()] + [_error(s, src, tgt, True) for s in
                                                                 payload.get("anthea_deleted", ())]}
                if payload.get("anthea_prior_rater"):
                    result["prior_rater"] = payload["anthea_prior_rater"]
                results.append(result)
            parsed.append({"doc": doc, "sys": system, "srcSegments": sources, "tgtSegments": targets})
        yield json.dumps({"raterId": rater, "parameters": {"source_language": campaign.source_language,
                                                           "target_language": campaign.target_language},
                          "parsedDocSys": parsed, "results": results}, ensure_ascii=False) + "\n"


def _error(span: dict, src: str, tgt: str, deleted: bool = False) -> dict:
    location = span.get("location") or ("source" if span.get("side") == "source" else "translation")
    text = src if location == "source" else tgt
    kind, _, subtype = (span.get("category") or "Other").partition("/")
    error = {"location": location, "prefix": text[:span["start"]], "selected": text[span["start"]:span["end"]],
             "type": kind, "subtype": subtype or None, "severity": span["severity"]}
    return {**error, "marked_deleted": True} if deleted else error


def _writes(spec) -> bool:
    return spec.name == "mqm"


#: The mqm protocol's Anthea format, read and written.
ANTHEA = JudgmentFormat("anthea", parse_anthea, listed=8, protocols=("mqm",))
ANTHEA_JSONL = ExportFormat("anthea-jsonl", anthea_lines, "application/x-ndjson; charset=utf-8", "jsonl", _writes)
