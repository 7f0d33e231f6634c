"""The toy "thumbs" protocol: one thumb (up or down) with a confidence per translation.

Its strategy (options, item payload, answer checks), its HIT planner, its judgment-file format (`THUMBS_TSV`) and
its screen (templates/toy/thumbs.html, static/toy/thumbs.js beside this module) are all here; the settings name
`PROTOCOLS` (tests.toy.protocol.PROTOCOLS), and nothing in the project names the protocol.
"""
from __future__ import annotations

import random
from collections.abc import Iterable

from annotation.building.campaign_files import CampaignFileError
from annotation.building.hit_layout import HitPlanError, ItemPlan
from annotation.building.judgment_files import JudgmentFormat, JudgmentRow, ParsedJudgments, text_field
from annotation.building.text_lines import numbered_lines
from annotation.protocols.base import JudgmentError, Protocol, Screen, require_item_id, require_only
from annotation.protocols.options import Option

THUMBS = ("up", "down")
#: The campaign-file field this protocol reads: an optional question of the segment's own, shown instead of the
#: campaign's statement.
QUESTION_FIELD = "thumbs_question"


def plan_thumbs_hits(content, hit_size: int, levels: int, rng: random.Random) -> list[list[ItemPlan]]:
    """Every output once, shuffled, in HITs of `hit_size` items; each item carries what its screen shows."""
    n_systems = len(content.system_names)
    entries = []
    for segment in content.segments:
        record = content.record(segment.index) if content.record else {}
        question = record.get(QUESTION_FIELD)
        if question is not None and (not isinstance(question, str) or not 0 < len(question) <= 200):
            raise HitPlanError(f"seg_id {segment.seg_id}: '{QUESTION_FIELD}' must be a text of 1 to 200 characters")
        for system in range(n_systems):
            payload = {"levels": levels, **({"question": question} if question else {})}
            entries.append((segment.index, segment.index * n_systems + system, payload))
    rng.shuffle(entries)
    return [[ItemPlan(position=p, set_index=0, item_type="system", segment_id=seg, output_id=out, payload=payload)
             for p, (seg, out, payload) in enumerate(entries[start:start + hit_size])]
            for start in range(0, len(entries), hit_size)]


class Thumbs(Protocol):
    """Thumb up or down, with a confidence from 1 to the campaign's `confidence_levels`."""

    name = "toy-thumbs"
    label = "Toy thumbs (up or down, with confidence)"
    family = "toy-thumbs"
    screen = Screen("toy/thumbs.html", ("toy/thumbs.js",))
    own_options = (
        Option("thumbs_per_hit", "int", 10, "Toy thumbs: translations per HIT.", minimum=1, maximum=100,
               target="options"),
        Option("confidence_levels", "int", 3, "Toy thumbs: how many confidence buttons the screen shows (1 = unsure).",
               minimum=2, maximum=5, target="options"),
    )
    judgment_formats = ("tests.toy.protocol.THUMBS_TSV",)
    export_columns = ("levels",)
    export_payload_keys = ("levels",)

    def default_statement(self, language: str) -> str:
        return "Is this a good translation?"

    def plan_hits(self, content, hit_size, options, rng):
        return plan_thumbs_hits(content, options["thumbs_per_hit"], options["confidence_levels"], rng)

    def item_payload(self, item) -> dict:
        stored = item.payload or {}
        return {"id": item.id, "protocol": self.name, "source": item.segment.source, "candidate": item.output.text,
                "levels": stored.get("levels", 3), **({"question": stored["question"]} if "question" in stored else {})}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "thumb", "confidence"}, '{"item", "thumb", "confidence"}')
        if body.get("thumb") not in THUMBS:
            raise JudgmentError("'thumb' must be \"up\" or \"down\"")
        confidence = body.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, int) or confidence < 1:
            raise JudgmentError("'confidence' must be a whole number from 1")
        return {"choice": body["thumb"], "score": float(confidence)}

    def check_answer(self, item, fields) -> None:
        levels = (item.payload or {}).get("levels", 3)
        if fields["score"] > levels:
            raise JudgmentError(f"'confidence' must lie between 1 and {levels}")

    def export_values(self, payload, options, row) -> dict:
        return {"levels": payload.get("levels")}


PROTOCOLS = (Thumbs(),)


def parse_thumbs_tsv(lines: Iterable[bytes | str], levels: str = "3") -> ParsedJudgments:
    """`worker<TAB>system<TAB>seg_id<TAB>up|down<TAB>confidence` a line; `levels` is the confidence scale."""
    errors: list[tuple[int, str]] = []
    rows: list[JudgmentRow] = []
    top = int(levels) if levels.isdigit() and 2 <= int(levels) <= 5 else None
    if top is None:
        raise CampaignFileError([(0, "levels must be a whole number from 2 to 5")])
    for number, text in numbered_lines(lines, errors):
        fields = text.rstrip("\r\n").split("\t")
        if fields == [""]:
            continue
        try:
            if len(fields) != 5:
                raise ValueError(f"expected 5 tab-separated fields, found {len(fields)}")
            worker, system, seg_id, thumb, confidence = fields
            if thumb not in THUMBS or not seg_id.isdigit() or confidence not in {str(c) for c in range(1, top + 1)}:
                raise ValueError(f"expected a seg_id, up or down and a confidence from 1 to {top}")
            rows.append(JudgmentRow(hit="imported", worker=text_field(worker, "worker", 255), item_type="system",
                                    system=text_field(system, "system", 200), segment=int(seg_id), choice=thumb,
                                    score=float(confidence), payload={"levels": top}))
        except ValueError as exc:
            errors.append((number, str(exc)))
    if not rows and not errors:
        errors.append((0, "the file has no judgments"))
    if errors:
        raise CampaignFileError(errors)
    return ParsedJudgments(rows=rows, protocol="toy-thumbs", options={"confidence_levels": top})


THUMBS_TSV = JudgmentFormat("thumbs-tsv", parse_thumbs_tsv, protocols=("toy-thumbs",),
                            text_options={"levels": "the confidence scale's top (2 to 5)"})
