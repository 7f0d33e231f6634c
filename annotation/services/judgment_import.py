"""Import of judgments collected elsewhere into analysis-only campaigns (docs/api.md,
"Judgments collected elsewhere"), so published evaluations can be re-analysed with the
same statistics and API. The whole file is validated first; then everything is written in
one transaction with bulk inserts (COPY on PostgreSQL).

Formats are registered in `JUDGMENT_FORMATS`: a parser from lines to `ParsedJudgments`.
"""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from ..models import (
    Annotator,
    Assignment,
    Campaign,
    Document,
    Hit,
    HitItem,
    Judgment,
    Segment,
    System,
    SystemOutput,
    new_token,
)
from ..protocols import UnknownProtocol, get_protocol
from .bulk import insert
from .campaign_import import CampaignFileError, study_named, unique_slug
from .text_lines import bounded_number, numbered_lines

WMT_DA_HEADER = ["HITId", "WorkerId", "Input.src", "Input.trg", "Input.item", "hit", "sys_id", "rid", "type", "sid",
                 "score", "time"]
WMT_DA_TYPES = {"SYSTEM": "system", "REPEAT": "repeat", "REF": "reference", "BAD_REF": "bad_ref"}
_SPACES = re.compile(r"[ \t]+")


@dataclass
class JudgmentRow:
    hit: str
    worker: str
    item_type: str
    system: str | None
    segment: int | None
    score: float | None = None
    seconds: float | None = None
    choice: str = ""
    payload: dict = field(default_factory=dict)
    #: A ranking: candidate key -> rank; the candidates are `payload["candidates"]`, each naming its system.
    ranks: dict[str, int] | None = None


@dataclass
class ParsedJudgments:
    rows: list[JudgmentRow]
    protocol: str
    source_language: str = ""
    target_language: str = ""
    options: dict = field(default_factory=dict)

    def store(self, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
        """Write the judgments as a new analysis-only campaign (inside `import_judgments`' transaction); a format
        that carries more than rows (texts, spans) overrides this."""
        return _store(self, name, study, owner)


def text_field(text: str, what: str, max_length: int) -> str:
    """A text field of an imported line, refused when too long or holding what no database stores."""
    if len(text) > max_length:
        raise ValueError(f"{what} must be at most {max_length} characters, not {len(text)}")
    if "\x00" in text or any("\ud800" <= ch <= "\udfff" for ch in text):
        raise ValueError(f"{what} must not contain NUL characters or lone surrogates")
    return text


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


JUDGMENT_FORMATS: dict[str, Callable[..., ParsedJudgments]] = {"wmt-da": parse_wmt_da}  # more at the end


@dataclass
class JudgmentImportResult:
    campaign: Campaign
    judgments: int


def import_judgments(lines: Iterable[bytes | str], *, fmt: str, name: str, study: str | None = None, owner=None,
                     **format_options) -> JudgmentImportResult:
    """Validate a file of external judgments and store it as an analysis-only campaign (in `study`, if named),
    owned by `owner` (a user, or None), who also owns the study when this import creates it."""
    parser = JUDGMENT_FORMATS.get(fmt)
    if parser is None:
        raise CampaignFileError([(0, f"unknown format {fmt!r}; one of: {', '.join(JUDGMENT_FORMATS)}")])
    if not name or not name.strip():
        raise CampaignFileError([(0, "the campaign needs a name")])
    accepted = set(inspect.signature(parser).parameters) - {"lines"}
    unknown = sorted(set(format_options) - accepted)
    if unknown:
        raise CampaignFileError([(0, f"format {fmt} does not take: {', '.join(unknown)}")])
    parsed = parser(lines, **format_options)
    try:
        get_protocol(parsed.protocol)
    except UnknownProtocol as exc:
        raise CampaignFileError([(0, str(exc))]) from None
    if study is not None and (not isinstance(study, str) or len(study) > 200 or "\x00" in study):
        raise CampaignFileError([(0, "study: a name of at most 200 characters")])
    with transaction.atomic():
        return parsed.store(name.strip(), study, owner)


def _store(parsed: ParsedJudgments, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
    now = timezone.now()
    rows = parsed.rows
    campaign = Campaign.objects.create(
        name=name, slug=unique_slug(name), protocol=parsed.protocol, analysis_only=True, options=parsed.options,
        study=study_named(study, owner), owner=owner,
        status=Campaign.Status.CLOSED, source_language=parsed.source_language,
        target_language=parsed.target_language or "en", hit_size=100,
    )
    document = Document.objects.create(campaign=campaign, doc_id="imported", position=0)
    segment_numbers = sorted({r.segment for r in rows if r.segment is not None})
    segment_ids = dict(zip(segment_numbers, insert(Segment, ["campaign_id", "document_id", "seg_id", "source",
                                                             "reference"],
                                                   [(campaign.pk, document.pk, s, "", "") for s in segment_numbers]),
                           strict=True))
    ranked = [c for r in rows if r.ranks is not None for c in r.payload["candidates"]]
    system_names = sorted({r.system for r in rows if r.system is not None} | {c["name"] for c in ranked})
    system_ids = {s.name: s.pk for s in System.objects.bulk_create([System(campaign=campaign, name=n)
                                                                    for n in system_names])}
    index = {name: i for i, name in enumerate(system_names)}
    for candidate in ranked:  # a ranking's candidate names its system by its place among the campaign's
        candidate["system"] = index[candidate["name"]]
    output_keys = sorted({(r.system, r.segment) for r in rows if r.system is not None and r.segment is not None})
    output_ids = dict(zip(output_keys, insert(SystemOutput, ["campaign_id", "segment_id", "system_id", "text"],
                                              [(campaign.pk, segment_ids[seg], system_ids[sys], "")
                                               for sys, seg in output_keys]), strict=True))
    workers = sorted({r.worker for r in rows})
    known = dict(zip(workers, imported_annotators(workers), strict=True))

    # One HIT (and assignment) per HIT id and worker: items are listed per worker in these files.
    groups: dict[tuple[str, str], list[JudgmentRow]] = {}
    for row in rows:
        groups.setdefault((row.hit, row.worker), []).append(row)
    keys = list(groups)
    hit_ids = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                     [(campaign.pk, n + 1, len(groups[k]), k[0][:100]) for n, k in enumerate(keys)])
    assignment_ids = insert(Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position",
                                         "started_at", "last_activity_at", "completed_at", "completion_code"],
                            [(campaign.pk, hit_id, known[k[1]], new_token(), Assignment.Status.COMPLETED,
                              len(groups[k]), now, now, now, "") for hit_id, k in zip(hit_ids, keys, strict=True)])
    item_rows, judgment_rows = [], []
    for hit_id, assignment_id, key in zip(hit_ids, assignment_ids, keys, strict=True):
        for position, row in enumerate(groups[key]):
            output = output_ids.get((row.system, row.segment))
            item_rows.append((hit_id, position, position // 10, row.item_type, segment_ids.get(row.segment), output,
                              "", row.payload))
            judgment_rows.append((campaign.pk, assignment_id, known[key[1]], row.score, row.choice, row.ranks,
                                  row.seconds, now))
    item_ids = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                "payload"], item_rows)
    insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "choice", "ranks",
                      "seconds", "created_at"],
           [(*j[:3], item_id, *j[3:]) for j, item_id in zip(judgment_rows, item_ids, strict=True)])
    return JudgmentImportResult(campaign=campaign, judgments=len(rows))


def imported_annotators(names: list[str]) -> list[int]:
    """The annotator pk of each rater (by external id), created where new."""
    known = dict(Annotator.objects.filter(external_id__in=names).values_list("external_id", "pk"))
    new = [w for w in names if w not in known]
    Annotator.objects.bulk_create([Annotator(external_id=w, source="imported") for w in new], batch_size=5000)
    known.update(Annotator.objects.filter(external_id__in=new).values_list("external_id", "pk"))
    return [known[w] for w in names]


from annotation.protocols.pairwise.formats import parse_pairwise_csv  # noqa: E402  (uses the helpers above)

JUDGMENT_FORMATS["pairwise-csv"] = parse_pairwise_csv

from annotation.protocols.ranking.formats import parse_wmt_rank  # noqa: E402

JUDGMENT_FORMATS["wmt-rank"] = parse_wmt_rank

from annotation.protocols.error_spans.esa_jsonl import parse_esa_jsonl  # noqa: E402
from annotation.protocols.error_spans.mqm_tsv import parse_mqm_tsv  # noqa: E402

JUDGMENT_FORMATS["mqm-tsv"] = parse_mqm_tsv
JUDGMENT_FORMATS["esa-jsonl"] = parse_esa_jsonl
#: Format options passed as plain text, by the command (--rows) and the API (field `rows`) alike: name -> help.
FORMAT_TEXT_OPTIONS = {
    "rows": "wmt-rank: the WMT08/09 rows imported, RANK (default), CONSTITUENT or CONSTITUENT_ACCEPT.",
    "pair": "wmt-rank: the language pair (srclang-trglang) or TASK to import from a file that holds several; "
            "mqm-tsv, esa-jsonl: the campaign's languages as source-target, e.g. en-de.",
}
