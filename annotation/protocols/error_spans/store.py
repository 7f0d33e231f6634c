"""What the error-span formats of judgments collected elsewhere (docs/api.md §5.4, §5.5) share: the file's
contents collected in flat arrays while parsing, and their storage. `mqm-tsv` (mqm_tsv.py, Google's
published MQM files) and `esa-jsonl` (esa_jsonl.py, one ESA judgment a line) both import into an
analysis-only campaign of protocol `mqm` or `esa` with the texts, so the document view, the statistics and the
export work as for a campaign annotated here; annotation/services/export.py writes both formats back, and an
export re-imports to the same judgments.

Offsets are half-open `[start, end)` in Unicode code points of the text without `<v>` marks (Python's `len`);
an error with no span is a zero-length span at the end of the translation (the omission convention of
building/spans.py).

Parsing keeps what it collects in flat arrays (no object per row): 1.5 million rows fit in a few hundred MB.
"""
from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field

import numpy as np
from django.utils import timezone

from annotation.building.bulk import insert
from annotation.building.campaign_files import CampaignFileError, Problems, study_named, unique_slug
from annotation.building.judgment_files import JudgmentImportResult, ParsedJudgments, imported_annotators
from annotation.building.media_records import store_imported_media
from annotation.models import (
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

MAX_NAME, MAX_RATER, MAX_CATEGORY, MAX_LANGUAGE = 200, 255, 100, 16
#: Items per imported HIT: a rater's judgments are split into HITs of this many (positions are small integers).
HIT_ITEMS = 1000
#: Segment numbers lie in [-LIMIT, LIMIT) (a database integer).
LIMIT = 2**31
INTEGER = re.compile(r"[+-]?\d{1,10}")
#: The help of the formats' `pair` option.
LANGUAGES_HELP = "the campaign's languages as source-target, e.g. en-de"


def checked_name(value: str, what: str, longest: int) -> str:
    """`value` if neither empty nor longer than `longest`; ValueError ("<what> is empty", …)."""
    if not value:
        raise ValueError(f"{what} is empty")
    if len(value) > longest:
        raise ValueError(f"{what} must be at most {longest} characters, not {len(value)}")
    return value


def language_pair(pair: str | None) -> tuple[str, str]:
    """`pair` as (source, target) language codes: 'en-de' or 'en_US-de_DE'; ('', '') for None."""
    if pair is None:
        return "", ""
    parts = pair.strip().split("-") if isinstance(pair, str) else []
    if len(parts) != 2 or not all(0 < len(p) <= MAX_LANGUAGE and p.replace("_", "").isalnum() for p in parts):
        raise CampaignFileError([(0, "pair: the languages as source-target, e.g. en-de")])
    return parts[0], parts[1]


def _intern(names: dict[str, int], name: str) -> int:
    """The index of `name` among `names`, in the order first seen."""
    return names.setdefault(name, len(names))


def _agrees(texts: list, index: int, text: str | None) -> bool:
    """Whether `text` agrees with the text kept at `index` (None: not known yet); a text where none was is kept."""
    known = texts[index]
    if text is None or known == text:
        return True
    if known is None:
        texts[index] = text
        return True
    return False


@dataclass
class Collected:
    """What a file holds, as indices into interned names and flat arrays (docs, segments, outputs, raters,
    judgments, spans), in the order first seen."""

    docs: dict[str, int] = field(default_factory=dict)
    doc_domains: list[str] = field(default_factory=list)
    segments: dict[int, int] = field(default_factory=dict)
    seg_doc: array = field(default_factory=lambda: array("q"))
    seg_number: array = field(default_factory=lambda: array("q"))
    seg_line: array = field(default_factory=lambda: array("q"))
    seg_source: list = field(default_factory=list)
    #: The instructions the systems were given, by segment index (only segments whose lines give them).
    seg_instructions: dict[int, str] = field(default_factory=dict)
    systems: dict[str, int] = field(default_factory=dict)
    outputs: dict[int, int] = field(default_factory=dict)
    out_system: array = field(default_factory=lambda: array("q"))
    out_segment: array = field(default_factory=lambda: array("q"))
    out_line: array = field(default_factory=lambda: array("q"))
    out_text: list = field(default_factory=list)
    #: MQM: the output's global `seg_id` (kept in each judgment's item payload and written back on export).
    out_global: array = field(default_factory=lambda: array("q"))
    raters: dict[str, int] = field(default_factory=dict)
    judgments: dict[int, int] = field(default_factory=dict)
    j_output: array = field(default_factory=lambda: array("q"))
    j_rater: array = field(default_factory=lambda: array("q"))
    j_line: array = field(default_factory=lambda: array("q"))
    j_score: array = field(default_factory=lambda: array("d"))
    #: ESA: the annotation wave of each judgment (1 unless the file says otherwise; kept in the item's payload).
    j_wave: array = field(default_factory=lambda: array("q"))
    s_judgment: array = field(default_factory=lambda: array("q"))
    s_start: array = field(default_factory=lambda: array("q"))
    s_end: array = field(default_factory=lambda: array("q"))
    s_severity: array = field(default_factory=lambda: array("l"))
    s_category: array = field(default_factory=lambda: array("l"))
    s_source_side: array = field(default_factory=lambda: array("b"))
    severities: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    #: ESA: media by segment index and by document index, as the file gave them (docs/api.md §2.1).
    seg_media: dict[int, list] = field(default_factory=dict)
    doc_media: dict[int, list] = field(default_factory=dict)
    #: What a format keeps of a judgment beyond its spans (Anthea: prior rater, deleted errors), by judgment.
    j_extra: dict[int, dict] = field(default_factory=dict)

    def document(self, name: str) -> int:
        index = self.docs.get(name)
        if index is None:
            index = self.docs[name] = len(self.docs)
            self.doc_domains.append("")
        return index

    def segment(self, doc: int, number: int, source: str | None, line: int) -> int:
        """The segment's index; ValueError if `source` differs from the source seen before (None: unknown)."""
        key = (doc << 32) | (number + LIMIT)
        index = self.segments.get(key)
        if index is None:
            index = self.segments[key] = len(self.seg_line)
            self.seg_doc.append(doc)
            self.seg_number.append(number)
            self.seg_line.append(line)
            self.seg_source.append(source)
            return index
        self.check_source(index, source)
        return index

    def instructions(self, segment: int, text: str | None) -> None:
        """Keep a segment's instructions; ValueError if a line of the same segment gave others."""
        if not text:
            return
        known = self.seg_instructions.setdefault(segment, text)
        if known != text:
            raise ValueError(f"the instructions differ from those on line {self.seg_line[segment]} for the same "
                             "segment")

    def check_source(self, segment: int, source: str | None) -> None:
        """ValueError if `source` differs from the segment's source seen before."""
        if not _agrees(self.seg_source, segment, source):
            raise ValueError(f"the source differs from the one on line {self.seg_line[segment]} for the same segment")

    def output(self, system: str, segment: int, text: str | None, line: int, global_id: int = 0) -> int:
        """The output's index; ValueError if `text` or `global_id` differs from what was seen before."""
        sys_index = _intern(self.systems, system)
        key = (sys_index << 40) | segment
        index = self.outputs.get(key)
        if index is None:
            index = self.outputs[key] = len(self.out_line)
            self.out_system.append(sys_index)
            self.out_segment.append(segment)
            self.out_line.append(line)
            self.out_text.append(text)
            self.out_global.append(global_id)
            return index
        self.check_translation(index, text)
        if global_id != self.out_global[index]:
            raise ValueError(f"seg_id is {global_id} here but {self.out_global[index]} on line {self.out_line[index]} "
                             "for the same system and segment")
        return index

    def check_translation(self, output: int, text: str | None) -> None:
        """ValueError if `text` differs from the output's translation seen before."""
        if not _agrees(self.out_text, output, text):
            raise ValueError(f"the translation differs from the one on line {self.out_line[output]} for the same "
                             "system and segment")

    def rater(self, name: str) -> int:
        return _intern(self.raters, name)

    def new_judgment(self, output: int, rater: int, line: int, score: float = math.nan, wave: int = 1) -> int:
        index = len(self.j_line)
        self.j_output.append(output)
        self.j_rater.append(rater)
        self.j_line.append(line)
        self.j_score.append(score)
        self.j_wave.append(wave)
        return index

    def add_span(self, judgment: int, start: int, end: int, severity: str, category: str | None,
                 source_side: bool = False) -> None:
        self.append_span(judgment, start, end, _intern(self.severities, severity),
                         -1 if category is None else _intern(self.categories, category), source_side)

    def append_span(self, judgment: int, start: int, end: int, severity: int, category: int,
                    source_side: bool = False) -> None:
        """A span whose severity and category are given by their indices (-1: no category)."""
        self.s_judgment.append(judgment)
        self.s_start.append(start)
        self.s_end.append(end)
        self.s_severity.append(severity)
        self.s_category.append(category)
        self.s_source_side.append(source_side)

    def spans_by_judgment(self) -> tuple[list[int], list[int]]:
        """(span indices ordered by judgment, each judgment's first position in that order; one more at the
        end), the spans of a judgment in the order they were added."""
        n = len(self.j_line)
        owner = np.frombuffer(self.s_judgment, dtype=np.int64) if len(self.s_judgment) else np.zeros(0, np.int64)
        order = np.argsort(owner, kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))])
        return order.tolist(), starts.tolist()


@dataclass
class ErrorSpanJudgments(ParsedJudgments):
    """A parsed error-span file: `collected` instead of `rows`, stored by its own storer (documents, texts,
    domains and spans)."""

    collected: Collected | None = None
    #: Whether each item keeps its output's global `seg_id` (MQM files number segments across documents too).
    global_ids: bool = False

    def store(self, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
        return store_error_spans(self, name, study, owner)


def parsed_error_spans(collected: Collected, problems: Problems, *, empty: bool, fmt: str, protocol: str,
                       languages: tuple[str, str], options: dict | None = None, global_ids: bool = False
                       ) -> ErrorSpanJudgments:
    """The end of a parse: the file refused with all its problems (or as empty, or as holding no judgment), else
    its judgments with the campaign options of format `fmt` (`options` added to those both formats set)."""
    if empty and not problems:
        problems.append((0, "the file is empty"))
    elif not problems and not len(collected.j_line):
        problems.append((0, "the file has no judgments"))
    if problems:
        raise problems.refuse()
    options = {"imported_format": fmt, **(options or {}), "show_source": True, "perturbation_rate": 0.0}
    return ErrorSpanJudgments(rows=[], protocol=protocol, source_language=languages[0],
                              target_language=languages[1], options=options, collected=collected,
                              global_ids=global_ids)


def store_error_spans(parsed: ErrorSpanJudgments, name: str, study: str | None = None, owner=None
                      ) -> JudgmentImportResult:
    """Write a parsed error-span file: documents (with domains), segments (sources), systems, outputs
    (translations), one completed assignment per rater and HIT of at most HIT_ITEMS items (a rater's judgments in
    file order), an item (its payload keeping MQM's global `seg_id` and an ESA wave other than 1) and a judgment
    with its spans per judged segment. Bulk inserts (COPY on PostgreSQL)."""
    c = parsed.collected
    now = timezone.now()
    campaign = Campaign.objects.create(
        name=name, slug=unique_slug(name), protocol=parsed.protocol, analysis_only=True, options=parsed.options,
        study=study_named(study, owner), owner=owner, status=Campaign.Status.CLOSED,
        source_language=parsed.source_language, target_language=parsed.target_language, hit_size=HIT_ITEMS)
    pk = campaign.pk
    doc_names = list(c.docs)
    doc_pks = insert(Document, ["campaign_id", "doc_id", "position", "domain"],
                     [(pk, d, i, c.doc_domains[i]) for i, d in enumerate(doc_names)])
    n_seg = len(c.seg_line)
    seg_order = sorted(range(n_seg), key=lambda s: (c.seg_doc[s], c.seg_number[s]))
    seg_pks = array("q", bytes(8 * n_seg))
    for s, seg_pk in zip(seg_order, insert(
            Segment, ["campaign_id", "document_id", "seg_id", "source", "reference", "media", "instructions"],
            ((pk, doc_pks[c.seg_doc[s]], c.seg_number[s], c.seg_source[s] or "", "", c.seg_media.get(s),
              c.seg_instructions.get(s, ""))
             for s in seg_order),
            count=n_seg), strict=True):
        seg_pks[s] = seg_pk
    if c.seg_media or c.doc_media:
        store_imported_media(campaign, {doc_pks[d]: media for d, media in c.doc_media.items()},
                             [(doc_pks[c.seg_doc[s]], c.seg_number[s], media) for s, media in c.seg_media.items()])
    system_names = sorted(c.systems)
    system_pk = {s.name: s.pk for s in System.objects.bulk_create([System(campaign=campaign, name=n)
                                                                   for n in system_names])}
    sys_pks = [0] * len(c.systems)
    for system, index in c.systems.items():
        sys_pks[index] = system_pk[system]
    n_out = len(c.out_line)
    out_order = sorted(range(n_out), key=lambda o: (seg_pks[c.out_segment[o]], sys_pks[c.out_system[o]]))
    out_pks = array("q", bytes(8 * n_out))
    for o, out_pk in zip(out_order, insert(
            SystemOutput, ["campaign_id", "segment_id", "system_id", "text"],
            ((pk, seg_pks[c.out_segment[o]], sys_pks[c.out_system[o]], c.out_text[o] or "") for o in out_order),
            count=n_out), strict=True):
        out_pks[o] = out_pk
    annotator_pks = imported_annotators(list(c.raters))

    # HITs: each rater's judgments in file order, HIT_ITEMS at a time
    n = len(c.j_line)
    by_rater = np.argsort(np.frombuffer(c.j_rater, dtype=np.int64), kind="stable").tolist()
    chunks: list[tuple[int, int, int]] = []  # (rater, first, end) in by_rater
    first = 0
    while first < n:
        rater = c.j_rater[by_rater[first]]
        end = first
        while end < n and end - first < HIT_ITEMS and c.j_rater[by_rater[end]] == rater:
            end += 1
        chunks.append((rater, first, end))
        first = end
    rater_names = list(c.raters)
    hit_pks = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                     [(pk, number + 1, end - first, rater_names[rater][:100])
                      for number, (rater, first, end) in enumerate(chunks)])
    assignment_pks = insert(
        Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position", "started_at",
                     "last_activity_at", "completed_at", "completion_code"],
        [(pk, hit_pk, annotator_pks[rater], new_token(), Assignment.Status.COMPLETED, end - first, now, now, now, "")
         for hit_pk, (rater, first, end) in zip(hit_pks, chunks, strict=True)])
    global_ids = parsed.global_ids

    def items():
        for hit_pk, (_, first, end) in zip(hit_pks, chunks, strict=True):
            for position in range(end - first):
                j = by_rater[first + position]
                output = c.j_output[j]
                payload = {"seg_id": c.out_global[output]} if global_ids else {}
                if c.j_wave[j] != 1:  # the annotation wave (esa-jsonl `wave`): 1 unless stored
                    payload["wave"] = c.j_wave[j]
                payload.update(c.j_extra.get(j, ()))
                yield (hit_pk, position, position // 10, "system", seg_pks[c.out_segment[output]],
                       out_pks[output], "", payload)

    item_pks = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                "payload"], items(), count=n)
    span_order, span_starts = c.spans_by_judgment()
    severities, categories = list(c.severities), list(c.categories)
    starts, ends, sevs, cats, sides = c.s_start, c.s_end, c.s_severity, c.s_category, c.s_source_side

    def spans_of(j: int) -> list[dict]:
        spans = []
        for s in span_order[span_starts[j]:span_starts[j + 1]]:
            span = {"start": starts[s], "end": ends[s], "severity": severities[sevs[s]]}
            if cats[s] >= 0:
                span["category"] = categories[cats[s]]
            if sides[s]:
                span["side"] = "source"
            spans.append(span)
        return spans

    def judgments():
        for assignment_pk, (rater, first, end) in zip(assignment_pks, chunks, strict=True):
            annotator = annotator_pks[rater]
            for k in range(first, end):
                j = by_rater[k]
                score = c.j_score[j]
                yield (pk, assignment_pk, annotator, item_pks[k], None if math.isnan(score) else score,
                       spans_of(j), now)

    insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "spans", "created_at"],
           judgments(), count=n, return_ids=False)
    return JudgmentImportResult(campaign=campaign, judgments=n)
