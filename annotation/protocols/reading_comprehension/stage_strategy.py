"""Reading comprehension's later stages (docs/methods.md §9): vote on the questions, answer them on one
translation, grade the answers. Each is built from the stage before (`plan_stage`); the write stage and the
options are in `strategy.py`."""
from __future__ import annotations

import random

from annotation.building.hit_layout import ItemPlan
from annotation.building.screen_context import (
    DOCUMENT_SEGMENTS,
    DOCUMENT_SYSTEM_OUTPUTS,
    OTHER_ITEMS,
    document_segments,
    document_system_outputs,
    other_items,
)
from annotation.building.stage_specs import StagePlan
from annotation.protocols.base import (
    JudgmentError,
    Protocol,
    Screen,
    language_name,
    require_item_id,
    require_only,
    require_yes_no,
)

from .comprehension import (
    completed_per_hit,
    done_judgments,
    kept_questions,
    question_id,
    set_override,
    used_keys,
    vote_summary,
)
from .strategy import MAX_ANSWER, checked_text


class _Stage(Protocol):
    """What the three later stages share: the reading-comprehension family, built from the stage before, and
    never given to a judge whose own work the HIT holds (its `authors`)."""

    family = "reading-comprehension"
    stage_only = True
    export_columns = ("answer",)

    def hit_exposure(self, items) -> dict:
        return {"authors": sorted({i.payload["author"] for i in items})}

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        return annotator_id in (exposure.get("authors") or ())

    def preview_systems(self, item, options: dict) -> str:
        return ""


class ReadingComprehensionVote(_Stage):
    """Built from the write stage: one HIT per article whose writers are all done, one item per question
    (HitItem.text the question; its judgment, index, sample answer, author and article in the payload)."""

    name = "reading-comprehension-vote"
    label = "Reading comprehension: vote on the questions (stage of reading-comprehension)"
    screen = Screen("reading_comprehension/vote.html", ("reading_comprehension/reading_comprehension.js",))
    stage_name = "vote"
    screen_reads = frozenset({DOCUMENT_SEGMENTS, OTHER_ITEMS})

    def default_statement(self, language: str) -> str:
        return ("Is this a good question about the article (answerable from the article in a few words, not a "
                "number, date or yes/no question)? Is it redundant with another question?")

    def item_payload(self, item) -> dict:
        """The article (the human translation: the references of the item's document, which is the payload's
        `doc`) and the other questions of the HIT, from what the judging read brought along."""
        others = [{"id": p["question"], "question": text} for text, p in other_items(item)]
        return {"id": item.id, "protocol": self.name,
                "article": [reference for _, _, reference in document_segments(item)],
                "question": {"id": item.payload["question"], "question": item.text,
                             "answer": item.payload["sample"]}, "others": others}

    curated = "questions"

    def curation_rows(self, campaign) -> list[dict]:
        """Every question of the vote stage with the judges' decision and the researcher's override."""
        from annotation.models import Hit

        rows = []
        for hit_id in Hit.objects.filter(campaign=campaign).order_by("number").values_list("pk", flat=True):
            _, selection = kept_questions(campaign, hit_id)
            texts = dict((p["question"], (text, p["sample"])) for text, p in
                         campaign.hits.get(pk=hit_id).items.order_by("position").values_list("text", "payload"))
            overrides = (campaign.options or {}).get("question_overrides") or {}
            for key, decision in selection.items():
                text, sample = texts[key]
                rows.append({"key": key, "text": text, "detail": f"sample answer: {sample}; "
                             + vote_summary(decision), "kept": bool(decision["kept"]),
                             "override": overrides.get(key)})
        return rows

    def curate(self, campaign, key: str, keep: bool | None) -> None:
        set_override(campaign, key, keep)

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "good", "redundant_with"}, '{"item", "good", "redundant_with"}')
        good = require_yes_no(body, "good")
        redundant = body.get("redundant_with")
        if redundant is not None and (not isinstance(redundant, str) or len(redundant) > 40):
            raise JudgmentError("'redundant_with' must be the id of another question of the article, or null")
        return {"answer": {"good": good, "redundant_with": redundant}}

    def check_answer(self, item, fields: dict) -> None:
        redundant = fields["answer"]["redundant_with"]
        if redundant is None:
            return
        ids = {p["question"] for _, p in other_items(item)}
        if redundant not in ids:
            raise JudgmentError("'redundant_with' must be the id of another question of the article, or null")

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """One HIT per article whose write items have all their writers (or the write stage is complete)."""
        from annotation.models import HitItem

        used = used_keys(stage, "write_item")
        judgments = list(done_judgments(source).values_list("pk", "annotator_id", "answer", "item_id"))
        by_item: dict[int, list] = {}
        for row in judgments:
            by_item.setdefault(row[3], []).append(row)
        ready = [i for i, rows in by_item.items() if i not in used
                 and (len(rows) >= source.redundancy or source_complete)]
        docs = dict(HitItem.objects.filter(pk__in=ready).values_list("pk", "segment__document_id"))
        segments = dict(HitItem.objects.filter(pk__in=ready).values_list("pk", "segment_id"))
        exclude = (stage.options or {}).get("exclude_own_work", True)
        hits = []
        for write_item in sorted(ready):
            items = [ItemPlan(position=p, set_index=p, item_type="reference", segment_id=segments[write_item],
                              output_id=None, text=q["question"],
                              payload={"question": question_id(pk, k), "judgment": pk, "index": k,
                                       "sample": q["answer"], "flags": q.get("flags", []), "author": author,
                                       "write_item": write_item, "doc": docs[write_item]})
                     for p, (pk, author, k, q) in enumerate((pk, author, k, q) for pk, author, answer, _ in
                                                            by_item[write_item]
                                                            for k, q in enumerate(answer["questions"]))]
            hits.append((items, self.hit_exposure(items) if exclude else {}))
        return StagePlan(hits)


class ReadingComprehensionAnswer(_Stage):
    """Built from the vote stage: per article whose votes are in, one HIT per translation (each system, and the
    human translation as a control: item_type "reference"), one item holding the kept questions."""

    name = "reading-comprehension-answer"
    label = "Reading comprehension: answer the questions (stage of reading-comprehension)"
    screen = Screen("reading_comprehension/answer.html", ("reading_comprehension/reading_comprehension.js",))
    stage_name = "answer"
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS})

    def default_statement(self, language: str) -> str:
        return (f"Read the article ({language_name(language)}) and answer each question in a few words, from what "
                "the article says.")

    def item_payload(self, item) -> dict:
        """The article (the payload's `doc`, the item's segment's document) as its `system` translated it (the
        item's output is that system's), or its human translation for the control item (no system)."""
        if item.payload.get("system") is None:
            article = [reference for _, _, reference in document_segments(item)]
        else:
            article = [text for _, _, text in document_system_outputs(item)]
        return {"id": item.id, "protocol": self.name, "article": article,
                "questions": [{"id": q["id"], "question": q["question"]} for q in item.payload["questions"]]}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "answers"}, '{"item", "answers": {"<question id>": "..."}}')
        answers = body.get("answers")
        if not isinstance(answers, dict) or not answers or len(answers) > 50:
            raise JudgmentError("'answers' must be an object: {\"<question id>\": \"your answer\"}")
        return {"answer": {"answers": {str(k)[:40]: checked_text(v, f"the answer to question {k!s:.40}", MAX_ANSWER,
                                                          empty_ok=True) for k, v in answers.items()}}}

    def check_answer(self, item, fields: dict) -> None:
        ids = [q["id"] for q in item.payload["questions"]]
        given = fields["answer"]["answers"]
        missing = [q for q in ids if q not in given]
        if missing or len(given) != len(ids):
            raise JudgmentError(f"answer every question shown, and only those ({len(ids)}); "
                                f"{'missing: ' + ', '.join(missing) if missing else 'unknown ids given'}")
        if not any(given.values()):
            raise JudgmentError("every answer is empty: answer the questions from the article (leave a box empty "
                                "only when the article does not say)")

    def hit_exposure(self, items) -> dict:
        return {"exclusive": sorted({f"article:{i.payload['doc']}" for i in items}),
                "authors": sorted({a for i in items for a in i.payload["readers"]})}

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """Per vote HIT (article) with all its votes in: the kept questions, and one HIT per translation of the
        article, shuffled. The writers and voters of the article are kept out of them."""
        from annotation.models import Hit, HitItem, Segment, System, SystemOutput

        root = source.stage_input
        used = used_keys(stage, "vote_hit")
        done = completed_per_hit(source)
        ready = sorted(h for h, n in done.items() if h not in used and (n >= source.redundancy or source_complete))
        if not ready:
            return StagePlan([])
        systems = list(System.objects.filter(campaign=root).order_by("pk").values_list("pk", flat=True))
        voters: dict[int, set] = {}
        for hit_id, annotator in (done_judgments(source, item__hit_id__in=ready)
                                  .values_list("item__hit_id", "annotator_id")):
            voters.setdefault(hit_id, set()).add(annotator)
        rng = random.Random(f"{stage.seed}:{len(used)}")
        hits = []
        for vote_hit in ready:
            if not Hit.objects.filter(pk=vote_hit).exists():
                continue
            kept, _ = kept_questions(source, vote_hit)
            first = HitItem.objects.filter(hit_id=vote_hit).order_by("position").values_list("payload", flat=True)[0]
            doc = first["doc"]
            writers = set(HitItem.objects.filter(hit_id=vote_hit).values_list("payload__author", flat=True))
            readers = sorted(writers | voters.get(vote_hit, set()))
            if not kept:  # nothing to ask: the article is left out (a researcher may keep a question by hand)
                continue
            segment = Segment.objects.filter(document_id=doc).order_by("seg_id").values_list("pk", flat=True)[0]
            outputs = dict(SystemOutput.objects.filter(segment_id=segment).values_list("system_id", "pk"))
            for system in [*systems, None]:
                item = ItemPlan(position=0, set_index=0, item_type="reference" if system is None else "system",
                                segment_id=segment, output_id=None if system is None else outputs[system],
                                payload={"doc": doc, "system": system, "vote_hit": vote_hit, "questions": kept,
                                         "readers": readers})
                hits.append(([item], self.hit_exposure([item])))
        rng.shuffle(hits)
        return StagePlan(hits)


class ReadingComprehensionGrade(_Stage):
    """Built from the answer stage: one item per non-empty answer (HitItem.text the answer; the question, its
    sample answer, the answer judgment and its author in the payload)."""

    name = "reading-comprehension-grade"
    label = "Reading comprehension: grade the answers (stage of reading-comprehension)"
    screen = Screen("reading_comprehension/grade.html", ("reading_comprehension/reading_comprehension.js",))
    stage_name = "grade"

    def default_statement(self, language: str) -> str:
        return "Does the answer say what the sample answer says (in other words is fine)?"

    def item_payload(self, item) -> dict:
        return {"id": item.id, "protocol": self.name, "question": item.payload["question_text"],
                "sample_answer": item.payload["sample"], "answer": item.text}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "correct"}, '{"item", "correct"}')
        return {"answer": {"correct": require_yes_no(body, "correct")}}

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """One item per non-empty answer of a finished answer HIT not yet graded; full HITs of `hit_size` items,
        and the rest once the answer stage is complete. A judge never grades their own answers."""
        from annotation.models import HitItem

        used = {(p.get("judgment"), p.get("question")) for p in HitItem.objects.filter(hit__campaign=stage)
                .values_list("payload", flat=True)}
        rows = list(done_judgments(source).values_list("pk", "annotator_id", "answer", "item_id"))
        items = {pk: (segment, output, payload) for pk, segment, output, payload in HitItem.objects.filter(
            pk__in={r[3] for r in rows}).values_list("pk", "segment_id", "output_id", "payload")}
        ready = []
        for pk, author, answer, item in rows:
            segment, output, payload = items[item]
            for q in payload["questions"]:
                given = answer["answers"].get(q["id"], "")
                if given and (pk, q["id"]) not in used:
                    ready.append((pk, q, given, author, segment, output))
        exclude = (stage.options or {}).get("exclude_own_work", True)
        rng = random.Random(f"{stage.seed}:{len(used)}")
        rng.shuffle(ready)
        size, hits = stage.hit_size, []
        while len(ready) >= size or (source_complete and ready):
            chunk, ready = ready[:size], ready[size:]
            plans = [ItemPlan(position=p, set_index=p, item_type="system" if output else "reference",
                              segment_id=segment, output_id=output, text=given,
                              payload={"judgment": pk, "question": q["id"], "question_text": q["question"],
                                       "sample": q["sample"], "author": author})
                     for p, (pk, q, given, author, segment, output) in enumerate(chunk)]
            hits.append((plans, self.hit_exposure(plans) if exclude else {}))
        return StagePlan(hits)


#: The stages after the write stage, in the order of the protocol choices.
STAGE_PROTOCOLS = (ReadingComprehensionVote(), ReadingComprehensionAnswer(), ReadingComprehensionGrade())
