"""What every format of judgments collected elsewhere shares (docs/api.md, "Judgments collected elsewhere"): a
format's declaration (`JudgmentFormat`, which the protocols that read it list in `Protocol.judgment_formats`), a
parsed file (`ParsedJudgments` of `JudgmentRow`s), its checks of a text field, and the storage of a parsed file as
an analysis-only campaign (bulk inserts, COPY on PostgreSQL). A building block below the protocol packages, whose
formats parse files into these, and the import service (services/judgment_import.py) that dispatches to them."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.utils import timezone

from annotation.models import (
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

from .bulk import insert
from .campaign_files import study_named, unique_slug


@dataclass(frozen=True)
class JudgmentFormat:
    """A format of judgments collected elsewhere, declared by each protocol that reads it
    (`Protocol.judgment_formats`): its `name` (the command's --format, the API's `format`), its `parser` from
    lines to `ParsedJudgments`, whose keyword parameters are the options the format takes, the `protocols` whose
    campaigns its files make, and the help of its options given as plain text (`text_options`: name -> help,
    without a final period; formats that give an option the same help share it), and where it is `listed`."""

    name: str
    parser: Callable[..., ParsedJudgments]
    protocols: tuple[str, ...]
    text_options: dict[str, str] = field(default_factory=dict)
    #: Where the command, the API and the import form list the format among the others: lower first, equal ones in
    #: the protocols' order (settings.MTEVAL_PROTOCOLS). The shipped formats keep the order they have always had.
    listed: int = 100


@dataclass(frozen=True)
class ExportFormat:
    """A format of the judgment export beyond csv and json, declared by the protocols whose campaigns it may write
    (`Protocol.export_formats`): its `name` (the API's and the command's `format`), its `writer` from a campaign to
    lines, the response's `content_type`, the download's file `suffix`, and `writes`, which protocols' campaigns it
    writes (a protocol declaring a family of formats writes only those that fit its options)."""

    name: str
    writer: Callable[..., Iterator[str]]
    content_type: str
    suffix: str
    writes: Callable[..., bool]


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
    #: The field, entering no figure, that could not be read and is stored as missing ("" when none).
    unread: str = ""


@dataclass
class ParsedJudgments:
    rows: list[JudgmentRow]
    protocol: str
    source_language: str = ""
    target_language: str = ""
    options: dict = field(default_factory=dict)
    #: What was accepted but not as given (a field stored as missing, a span run to the end), naming the lines.
    warnings: list[str] = field(default_factory=list)

    def store(self, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
        """Write the judgments as a new analysis-only campaign (inside `import_judgments`' transaction); a format
        that carries more than rows (texts, spans) overrides this."""
        return store_parsed(self, name, study, owner)


def text_field(text: str, what: str, max_length: int) -> str:
    """A text field of an imported line, refused when too long or holding what no database stores."""
    if len(text) > max_length:
        raise ValueError(f"{what} must be at most {max_length} characters, not {len(text)}")
    if "\x00" in text or any("\ud800" <= ch <= "\udfff" for ch in text):
        raise ValueError(f"{what} must not contain NUL characters or lone surrogates")
    return text


def lines_warning(what: str, lines: list[int], most: int = 20) -> str:
    """A warning naming the lines it concerns ("… on line 7", "… on lines 3, 9 and 2 more")."""
    shown = ", ".join(str(n) for n in lines[:most]) + (f" and {len(lines) - most} more" if len(lines) > most else "")
    return f"{what} on line{'s' if len(lines) > 1 else ''} {shown}"


@dataclass
class JudgmentImportResult:
    campaign: Campaign
    judgments: int
    #: The parsed file's warnings (`ParsedJudgments.warnings`), shown by the command and the API.
    warnings: list[str] = field(default_factory=list)
    #: Every campaign one import made (a multi-task wmt-rank file makes one per task), this one first.
    campaigns: list[JudgmentImportResult] = field(default_factory=list)


def store_parsed(parsed: ParsedJudgments, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
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
