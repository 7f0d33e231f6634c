"""Review of error spans (two-stage MQM, docs/methods.md "Review of error spans"; Google's WMT MQM releases): a later
stage of an `mqm` or `esa` campaign (option `review`) in which a reviewer sees the spans of a first pass on the same
translation, keeps, changes (bounds, category, severity) or deletes each of them, adds the missing ones and scores
the translation. The first pass is another judge's finished annotation (`review` = `judges`, also the judgments of
an imported `mqm-tsv` or `esa-jsonl` file), or the campaign file's automatic `error_spans` (`review` =
`prefilled`). A reviewer never gets a HIT holding their own first pass.

An imported Anthea judgment made over a prior rater's pass (docs/api.md §5.10) brings the prior rater's errors its
rater deleted (`first_pass_deleted`, with `prior_rater`): the reviewer sees them struck through and may restore any.

The answer: `{"item", "review": [one entry per first-pass span, in order: {"action": "kept"} | {"action":
"changed", "span": {...}} | {"action": "deleted"}], "added": [spans], "restored": [indices into the deleted
errors], "score"}` (`restored` optional). Stored: `spans`, the reviewed spans each with its `origin` (kept, changed,
added, restored), `score`, and `answer`, the first pass and the review apart: `{"first_rater", "first_pass",
"review": [{"action", "from", "to"?}], "added"}`, with `"prior_rater", "first_pass_deleted", "restored"` where the
item has deleted errors.
"""
from __future__ import annotations

import random

from annotation.building.screen_context import DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS
from annotation.building.spans import SpanError, check_spans
from annotation.building.stage_specs import StagePlan
from annotation.protocols.base import JudgmentError, Screen, require_item_id, require_number, require_only

from .review_options import AUTOMATIC
from .strategy import SPAN_EDITOR_SCRIPTS, ErrorSpans

ACTIONS = ("kept", "changed", "deleted")


def _normalised(span: dict, text: str, severities, categories, where: str) -> dict:
    try:
        return check_spans([span], text, severities, categories)[0]
    except SpanError as exc:
        raise JudgmentError(f"{where}: {str(exc).removeprefix('span 0: ')}") from None


class SpanReview(ErrorSpans):
    """The review stage of `mqm` (`mqm-review`) or `esa` (`esa-review`): one item per first-pass annotation, the
    first pass kept in the item's payload (`first_pass`, `rater`, `author`, `judgment` or `output`)."""

    stage_name = "review"
    stage_only = True
    judgment_formats = ()
    screen = Screen("error_spans/span_review.html", (*SPAN_EDITOR_SCRIPTS, "error_spans/span_review.js"))
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS})

    def __init__(self, name: str, label: str, statement: str, mqm: bool):
        super().__init__(name, label, statement, mqm=mqm)
        self.own_options = ()

    def next_stages(self, options: dict) -> list:
        return []

    def item_payload(self, item) -> dict:
        payload = super().item_payload(item)
        payload["prefilled"] = []
        payload["first_pass"] = list(item.payload.get("first_pass") or ())
        payload["first_pass_deleted"] = list(item.payload.get("first_pass_deleted") or ())
        categories = self.item_categories(item, item.hit.campaign.options or {})
        if categories is not None:
            payload["categories"] = categories
        return payload

    def item_categories(self, item, options: dict) -> list[str] | None:
        """The campaign's taxonomy and, after it, any category of this item's first pass (or of the errors it
        deleted) the taxonomy lacks: what was imported is never refused when a reviewer keeps or restores it
        (docs/methods.md §9.4). None where spans carry no category (ESA)."""
        categories = self.categories(options)
        if categories is None:
            return None
        spans = [*(item.payload.get("first_pass") or ()), *(item.payload.get("first_pass_deleted") or ())]
        extra = [c for c in dict.fromkeys(s.get("category") for s in spans) if isinstance(c, str) and c
                 and c not in categories]
        return [*categories, *extra]

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "review", "added", "restored", "score"},
                     '{"item", "review", "added", "restored"?, "score"}')
        review, added, restored = body.get("review"), body.get("added", []), body.get("restored", [])
        if not isinstance(restored, list) or not all(isinstance(k, int) and not isinstance(k, bool)
                                                     for k in restored) or len(set(restored)) != len(restored):
            raise JudgmentError("'restored' must be a list of distinct indices into the first pass's deleted errors")
        if not isinstance(review, list):
            raise JudgmentError("'review' must be a list: one {\"action\": \"kept\"|\"changed\"|\"deleted\"} per "
                                "first-pass span, in order")
        if not isinstance(added, list):
            raise JudgmentError("'added' must be a list of {\"start\", \"end\", \"severity\"} objects")
        if "score" not in body:
            raise JudgmentError("'score' is missing: give the translation a 0–100 score")
        for k, entry in enumerate(review):
            if not isinstance(entry, dict) or entry.get("action") not in ACTIONS:
                raise JudgmentError(f"review {k}: 'action' must be one of {', '.join(ACTIONS)}")
            allowed = {"action", "span"} if entry["action"] == "changed" else {"action"}
            extra = sorted(set(entry) - allowed)
            if extra:
                raise JudgmentError(f"review {k}: unexpected field {extra[0][:40]!r} for a {entry['action']} span")
            if entry["action"] == "changed" and not isinstance(entry.get("span"), dict):
                raise JudgmentError(f"review {k}: a changed span needs 'span', what it became")
        return {"score": require_number(body, "score", 0, 100),
                "answer": {"review": review, "added": added, "restored": restored}}

    def check_answer(self, item, fields: dict) -> None:
        """Each first-pass span accounted for exactly once, a changed span really changed, every span (kept,
        changed, added) inside the text, of the campaign's severities and taxonomy, and none overlapping."""
        options = item.hit.campaign.options or {}
        severities, categories = self.severities(options), self.item_categories(item, options)
        text = item.text or item.output.text
        first = list(item.payload.get("first_pass") or ())
        review, added = fields["answer"]["review"], fields["answer"]["added"]
        if len(review) != len(first):
            raise JudgmentError(f"'review' holds {len(review)} entries; the first pass has {len(first)} spans: "
                                "account for each exactly once (kept, changed or deleted)")
        reviewed, entries = [], []
        for k, (entry, span) in enumerate(zip(review, first, strict=True)):
            original = {key: span[key] for key in ("start", "end", "severity", "category") if key in span}
            if entry["action"] == "changed":
                new = _normalised(entry["span"], text, severities, categories, f"review {k}")
                if new == original:
                    raise JudgmentError(f"review {k}: the span is unchanged; say \"kept\"")
                reviewed.append({**new, "origin": "changed"})
                entries.append({"action": "changed", "from": original, "to": new})
            else:
                if entry["action"] == "kept":
                    reviewed.append({**_normalised(original, text, severities, categories, f"review {k}"),
                                     "origin": "kept"})
                entries.append({"action": entry["action"], "from": original})
        new_spans = [_normalised(span, text, severities, categories, f"added span {k}") if isinstance(span, dict)
                     else _normalised({}, text, severities, categories, f"added span {k}")
                     for k, span in enumerate(added)]
        reviewed += [{**span, "origin": "added"} for span in new_spans]
        deleted, restored = list(item.payload.get("first_pass_deleted") or ()), fields["answer"]["restored"]
        if any(not 0 <= k < len(deleted) for k in restored):
            raise JudgmentError(f"'restored' names a deleted error the first pass does not have (it has "
                                f"{len(deleted)})")
        reviewed += [{**_normalised(deleted[k], text, severities, categories, f"restored error {k}"),
                      "origin": "restored"} for k in sorted(restored)]
        try:
            check_spans([{k: v for k, v in s.items() if k != "origin"} for s in reviewed], text, severities,
                        categories)
        except SpanError as exc:
            raise JudgmentError(f"the reviewed spans: {exc}") from None
        reviewed.sort(key=lambda s: (s["start"], s["end"]))
        fields["spans"] = reviewed
        fields["answer"] = {"first_rater": item.payload.get("rater", ""), "first_pass": first, "review": entries,
                            "added": new_spans}
        if deleted:
            fields["answer"].update(prior_rater=item.payload.get("prior_rater", ""), first_pass_deleted=deleted,
                                    restored=sorted(restored))

    def hit_exposure(self, items) -> dict:
        return {"authors": sorted({i.payload["author"] for i in items if i.payload.get("author") is not None})}

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        return annotator_id in (exposure.get("authors") or ())

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """One item per first-pass annotation not yet in a review HIT: a finished judgment of a system output
        (`review_of` judges; quality-control copies left out), or an output with automatic spans (`prefilled`).
        A HIT holds one first-pass rater's annotations, so that every other judge may review it; full HITs of
        `hit_size`, and the rest once the input stage is complete."""
        from annotation.models import Assignment, HitItem, Judgment, SystemOutput

        used = {(p.get("judgment"), p.get("output")) for p in HitItem.objects.filter(hit__campaign=stage)
                .values_list("payload", flat=True)}
        if (stage.options or {}).get("review_of") == "prefilled":
            ready = [(None, None, AUTOMATIC, spans, segment, output, {"output": output})
                     for output, segment, spans in SystemOutput.objects.filter(campaign=source, spans__isnull=False)
                     .order_by("pk").values_list("pk", "segment_id", "spans") if (None, output) not in used]
            source_complete = True
        else:
            rows = (Judgment.objects.filter(campaign=source, assignment__status=Assignment.Status.COMPLETED,
                                            item__item_type="system", item__output__isnull=False,
                                            spans__isnull=False)
                    .order_by("pk").values_list("pk", "annotator_id", "annotator__external_id",
                                                "annotator__user__username", "spans", "item__segment_id",
                                                "item__output_id", "item__payload__anthea_prior_rater",
                                                "item__payload__anthea_deleted"))
            ready = [(pk, author, external or username or str(author), spans, segment, output,
                      {"judgment": pk, **_prior_pass(prior, deleted)})
                     for pk, author, external, username, spans, segment, output, prior, deleted in rows
                     if (pk, None) not in used]
        by_author: dict = {}
        for row in ready:
            by_author.setdefault(row[1], []).append(row)
        rng = random.Random(f"{stage.seed}:{len(used)}")
        severities = self.severities(stage.options or {})
        hits = []
        for author in sorted(by_author, key=lambda a: (a is None, a or 0)):
            rows = by_author[author]
            rng.shuffle(rows)
            while len(rows) >= stage.hit_size or (source_complete and rows):
                chunk, rows = rows[:stage.hit_size], rows[stage.hit_size:]
                items = [self._item(p, row, severities) for p, row in enumerate(chunk)]
                hits.append((items, self.hit_exposure(items)))
        return StagePlan(hits)

    @staticmethod
    def _item(position: int, row: tuple, severities):
        """The item reviewing one first-pass annotation: its errors in the translation (what an imported file marks
        in the source, or as neutral or no error, is not reviewed)."""
        from annotation.building.hit_layout import ItemPlan

        _, author, rater, spans, segment, output, key = row
        first = _reviewable(spans, severities)
        if key.get("first_pass_deleted"):
            key = {**key, "first_pass_deleted": _reviewable(key["first_pass_deleted"], severities)}
        return ItemPlan(position=position, set_index=position, item_type="system", segment_id=segment,
                        output_id=output, payload={**key, "author": author, "rater": rater, "first_pass": first})

    #: The reviewed spans (each with its origin), the score, and the first pass and the review apart.
    export_columns = ("spans", "answer")
    export_formats = ("annotation.protocols.error_spans.export.MQM_TSV",
                      "annotation.protocols.error_spans.export.ESA_JSONL",
                      "annotation.protocols.error_spans.review_export.MQM_REVIEW_TSV")

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        return {}


def _reviewable(spans, severities) -> list[dict]:
    """The errors in the translation a review takes (spans marked in the source, neutral and no-error ones are not
    reviewed), as plain spans."""
    return [{k: s[k] for k in ("start", "end", "severity", "category") if k in s} for s in spans or ()
            if s.get("side") != "source" and s.get("location", "translation") == "translation"
            and s.get("severity") in severities and str(s.get("category", "")).lower() not in ("no-error", "no error")]


def _prior_pass(prior_rater, deleted) -> dict:
    """What an imported Anthea judgment made over a prior rater's pass keeps for its review: the prior rater and
    the errors of theirs it deleted (docs/api.md §5.10)."""
    return {"prior_rater": prior_rater or "", "first_pass_deleted": list(deleted)} if deleted else {}


#: The review stages, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    SpanReview("mqm-review", "MQM review: check a first pass's spans (stage of mqm)",
               "Check the errors marked in the first pass: keep, change or delete each one, add the missing ones, "
               "then score the translation from 0 to 100.", mqm=True),
    SpanReview("esa-review", "ESA review: check a first pass's spans (stage of esa)",
               "Check the errors marked in the first pass: keep, change or delete each one, add the missing ones, "
               "then score the translation from 0 (no meaning preserved) to 100 (perfect).", mqm=False),
)
