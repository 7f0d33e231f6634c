"""Post-editing for HTER in two stages (docs/methods.md §9; Callison-Burch 2009 §5.2):

* `post-edit` (stage *edit*): a screen of up to 10 consecutive sentences of one document, the reference beside
  each MT output in a text box; the judge edits the outputs "with as few changes as possible" so that they mean
  what the reference means and are good target language. An empty edit, or one identical to the reference, is
  refused.
* `post-edit-verify` (stage *verify*, built by itself from the edits): the reference and one edited output; two
  yes/no questions, same meaning? acceptable language? An edit passes on a majority yes to both. A verifier
  never gets a HIT with their own edits (option `exclude_own_work`, on by default).

The statistics (HTER with sacrebleu's TER) are the `post-edit` family's.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal

from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan
from annotation.building.screen_context import (
    DOCUMENT_SEGMENTS,
    DOCUMENT_SYSTEM_OUTPUTS,
    document_segments,
    document_system_outputs,
)
from annotation.building.shared_options import SCREENS_PER_HIT
from annotation.building.stage_specs import StagePlan, StageSpec
from annotation.protocols.base import (
    JudgmentError,
    Protocol,
    Screen,
    language_name,
    require_item_id,
    require_only,
    require_yes_no,
)
from annotation.protocols.common_options import EXCLUDE_OWN_WORK
from annotation.protocols.options import Option

SENTENCES_PER_SCREEN = 10
MAX_EDIT = 5_000

EDIT_OPTIONS = (
    SCREENS_PER_HIT,
    Option("verifiers", "int", 3, "Verifiers per edited output in the verify stage (an edit passes on a majority "
           "yes to both questions).", minimum=1, maximum=25, target="options"),
    Option("verify_items_per_hit", "int", 20, "Edited outputs per verify HIT.", minimum=1, maximum=200,
           target="options"),
    Option("verify_payment_per_hit", "decimal", Decimal("0"), "What a verifier earns per HIT.",
           minimum=Decimal("0"), maximum=Decimal("999999.99"), decimal_places=2, target="options"),
    EXCLUDE_OWN_WORK,
)


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


class PostEdit(Protocol):
    name = "post-edit"
    label = "Post-editing for HTER (edit, then verify)"
    family = "post-edit"
    screen = Screen("post_edit/post_edit.html", ("post_edit/char_diff.js", "post_edit/post_edit.js"))
    requires_reference = True
    stage_name = "edit"
    default_redundancy = 5
    own_options = EDIT_OPTIONS
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS})

    def default_statement(self, language: str) -> str:
        return (f"Edit each translation with as few changes as possible so that it means what the reference means "
                f"and is good {language_name(language)}.")

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options.setdefault("verifiers", 3)
        options.setdefault("verify_items_per_hit", 20)
        options["verify_payment_per_hit"] = str(options.get("verify_payment_per_hit") or "0")  # JSON: text
        options.setdefault("exclude_own_work", True)
        return []

    def plan_hits(self, content: CampaignContent, hit_size, options, rng: random.Random):
        """Screens of up to 10 consecutive sentences of one document by one system, shuffled into HITs of
        `screens_per_hit`; every output is on exactly one screen (the editors are the HIT's redundancy)."""
        n_systems = len(content.system_names)
        documents: dict[int, list[int]] = {}
        for segment in content.segments:
            documents.setdefault(segment.doc, []).append(segment.index)
        screens = []
        for doc in sorted(documents):
            indices = documents[doc]
            for start in range(0, len(indices), SENTENCES_PER_SCREEN):
                chunk = indices[start:start + SENTENCES_PER_SCREEN]
                for system in range(n_systems):
                    screens.append((chunk[0], content.outputs[chunk[0] * n_systems + system].id, len(chunk)))
        if not screens:
            raise HitPlanError("the file has no segments")
        rng.shuffle(screens)
        return [[ItemPlan(position=p, set_index=p, item_type="system", segment_id=first, output_id=output,
                          payload={"count": count})
                 for p, (first, output, count) in enumerate(screens[h:h + hit_size])]
                for h in range(0, len(screens), hit_size)]

    def item_payload(self, item) -> dict:
        rows = _screen(item)
        return {"id": item.id, "protocol": self.name, "reference": [r.reference for r in rows],
                "outputs": [r.output for r in rows], "source": [r.source for r in rows]}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "edits"}, '{"item", "edits"}')
        edits = body.get("edits")
        if not isinstance(edits, list) or not edits or len(edits) > SENTENCES_PER_SCREEN:
            raise JudgmentError(f"'edits' must be a list of 1 to {SENTENCES_PER_SCREEN} edited translations")
        for k, edit in enumerate(edits, start=1):
            if not isinstance(edit, str):
                raise JudgmentError(f"edit {k} must be a string")
            if len(edit) > MAX_EDIT:
                raise JudgmentError(f"edit {k} must be at most {MAX_EDIT} characters")
            if not edit.strip():
                raise JudgmentError(f"edit {k} is empty: correct the translation rather than delete it")
        return {"answer": {"edits": [" ".join(e.split()) for e in edits]}}

    def check_answer(self, item, fields: dict) -> None:
        rows = _screen(item)
        outputs, references = [r.output for r in rows], [r.reference for r in rows]
        edits = fields["answer"]["edits"]
        if len(edits) != len(outputs):
            raise JudgmentError(f"'edits' holds {len(edits)} translations; the screen shows {len(outputs)}")
        for k, (edit, reference) in enumerate(zip(edits, references, strict=True), start=1):
            if _same(edit, reference) and not _same(outputs[k - 1], reference):
                raise JudgmentError(f"edit {k} is identical to the reference: edit the machine translation with as "
                                    "few changes as possible instead of copying the reference")

    def next_stages(self, options: dict) -> list:
        return [StageSpec("verify", "post-edit-verify", redundancy=int(options.get("verifiers", 3)),
                          hit_size=int(options.get("verify_items_per_hit", 20)),
                          payment_per_hit=Decimal(str(options.get("verify_payment_per_hit", "0"))),
                          options={"exclude_own_work": bool(options.get("exclude_own_work", True))})]

    #: The edits, as {"edits": [...]}, in the judgment export (docs/api.md §6.4).
    export_columns = ("answer",)

    def preview_systems(self, item, options: dict) -> str:
        return ""


class PostEditVerify(Protocol):
    """Built from the edit stage: one item per edited output (HitItem.text the edit, its judgment and sentence
    in the payload)."""

    name = "post-edit-verify"
    label = "Post-editing: verify the edits (stage of post-edit)"
    family = "post-edit"
    screen = Screen("post_edit/post_edit_verify.html",
                    ("annotation/choice_rows.js", "post_edit/post_edit_verify.js"))
    stage_name = "verify"
    stage_only = True

    def default_statement(self, language: str) -> str:
        return "Read the reference and the edited translation, then answer both questions."

    def item_payload(self, item) -> dict:
        return {"id": item.id, "protocol": self.name, "reference": item.segment.reference, "candidate": item.text}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "same_meaning", "acceptable"}, '{"item", "same_meaning", "acceptable"}')
        return {"answer": {key: require_yes_no(body, key) for key in ("same_meaning", "acceptable")}}

    def hit_exposure(self, items) -> dict:
        return {"authors": sorted({i.payload["author"] for i in items})}

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        return annotator_id in (exposure.get("authors") or ())

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """One item per edited sentence of a finished edit HIT not yet in a verify HIT; full HITs of `hit_size`
        items, and the rest once the edit stage is complete. A HIT holds edits of several editors, and a worker
        never gets one holding their own edits when `exclude_own_work` is on."""
        from annotation.models import Assignment, HitItem, Judgment

        used = {(p["judgment"], p["index"]) for p in HitItem.objects.filter(hit__campaign=stage)
                .values_list("payload", flat=True)}
        edits = list(Judgment.objects.filter(campaign=source, assignment__status=Assignment.Status.COMPLETED,
                                              answer__isnull=False)
                     .order_by("pk").values_list("pk", "annotator_id", "answer", "item_id"))
        fresh = [e for e in edits if any((e[0], k) not in used for k in range(len(e[2]["edits"])))]
        rows = screen_rows(HitItem.objects.filter(pk__in={e[3] for e in fresh}).select_related("segment", "output"))
        ready = [(pk, k, author, edit, rows[item][k].segment, rows[item][k].output_id)
                 for pk, author, answer, item in fresh for k, edit in enumerate(answer["edits"])
                 if (pk, k) not in used]
        size = stage.hit_size
        exclude = (stage.options or {}).get("exclude_own_work", True)
        rng = random.Random(f"{stage.seed}:{len(used)}")
        rng.shuffle(ready)
        hits = []
        while len(ready) >= size or (source_complete and ready):
            chunk, ready = ready[:size], ready[size:]
            items = [ItemPlan(position=p, set_index=p, item_type="system", segment_id=segment, output_id=output,
                              text=edit, payload={"judgment": pk, "index": k, "author": author})
                     for p, (pk, k, author, edit, segment, output) in enumerate(chunk)]
            hits.append((items, self.hit_exposure(items) if exclude else {}))
        return StagePlan(hits)

    #: The verdicts, as {"same_meaning", "acceptable"}, in the judgment export.
    export_columns = ("answer",)


@dataclass(frozen=True)
class ScreenRow:
    """One sentence of an edit screen: its segment, source, reference, MT output and the output's pk."""

    segment: int
    source: str
    reference: str
    output: str
    output_id: int


def _screen(item) -> list[ScreenRow]:
    """The sentences of one edit screen, as `screen_rows` gives them, from what the judging read brought along (the
    item's document and its system's outputs there): `count` segments from the item's segment on, by seg_id."""
    segments = document_segments(item)
    first = next(k for k, (pk, _, _) in enumerate(segments) if pk == item.segment_id)
    outputs = {segment: (pk, text) for segment, pk, text in document_system_outputs(item)}
    return [ScreenRow(pk, source, reference, outputs[pk][1], outputs[pk][0])
            for pk, source, reference in segments[first:first + item.payload["count"]]]


def screen_rows(items) -> dict[int, list[ScreenRow]]:
    """The sentences of edit screens (HitItems of `post-edit`), by item id: `count` consecutive segments of the
    item's document from the item's segment on, in the item's system's translation."""
    from annotation.models import Segment, SystemOutput

    items = list(items)
    documents = {i.segment.document_id for i in items}
    segments: dict[int, list[tuple]] = {}
    for row in (Segment.objects.filter(document_id__in=documents).order_by("document_id", "seg_id")
                .values_list("document_id", "seg_id", "pk", "source", "reference")):
        segments.setdefault(row[0], []).append(row)
    wanted: dict[int, list[tuple]] = {}
    for item in items:
        run = [r for r in segments[item.segment.document_id] if r[1] >= item.segment.seg_id][:item.payload["count"]]
        wanted[item.pk] = run
    pairs = {(r[2], item.output.system_id) for item in items for r in wanted[item.pk]}
    outputs = {(segment, system): (pk, text) for pk, segment, system, text in SystemOutput.objects.filter(
        segment_id__in={p[0] for p in pairs}, system_id__in={p[1] for p in pairs}).values_list(
        "pk", "segment_id", "system_id", "text")}
    return {item.pk: [ScreenRow(r[2], r[3], r[4], outputs[(r[2], item.output.system_id)][1],
                                outputs[(r[2], item.output.system_id)][0]) for r in wanted[item.pk]]
            for item in items}


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    PostEdit(),
    PostEditVerify(),
)
