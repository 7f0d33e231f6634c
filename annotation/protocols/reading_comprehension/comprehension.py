"""Reading comprehension's plain logic (docs/methods.md §9.3): question ids and flags, which questions a vote
keeps, and what a stage has used of its input; the protocols in
annotation/protocols/reading_comprehension/ are its screens and answers."""
from __future__ import annotations

import re
from collections import Counter

_YES_NO_ANSWER = re.compile(r"^\W*(yes|no|yeah|nope|true|false|ja|nein|oui|non|si|sí)\b\W*$", re.IGNORECASE)
_NUMBER_ANSWER = re.compile(r"^[\s\d.,:;/%+\-–()$€£]*\d[\s\d.,:;/%+\-–()$€£]*$")


def answer_flags(sample: str) -> list[str]:
    """What looks wrong with a sample answer, without refusing it: "yes-no" (the question asks yes or no) or
    "number" (only a number or date: the guidance asks for neither)."""
    flags = []
    if _YES_NO_ANSWER.match(sample):
        flags.append("yes-no")
    if _NUMBER_ANSWER.match(sample):
        flags.append("number")
    return flags


def question_id(judgment: int, index: int) -> str:
    """A question's id: its write judgment and its place in it ("<judgment pk>-<0..2>")."""
    return f"{judgment}-{index}"


def select_questions(order: list[str], votes: dict[str, list[tuple[bool, str | None]]], threshold: float,
                     overrides: dict | None = None) -> dict[str, dict]:
    """Which questions of one article are kept, walking them in `order` (as written). A question is kept when it
    has votes, its share of "good" votes is at least `threshold`, and no majority of its voters marked it redundant
    with an earlier kept question. `overrides` ({question id: true/false}, the researcher's) win over the votes.
    Per question: votes, good, share_good, redundant (votes naming an earlier kept one), kept, overridden."""
    overrides = overrides or {}
    kept: list[str] = []
    out = {}
    for q in order:
        cast = votes.get(q, [])
        good = sum(1 for g, _ in cast if g)
        share = good / len(cast) if cast else None
        redundant = Counter(r for _, r in cast if r is not None and r in kept)
        by_votes = bool(cast) and share >= threshold - 1e-12 and 2 * sum(redundant.values()) <= len(cast)
        keep = bool(overrides[q]) if q in overrides else by_votes
        if keep:
            kept.append(q)
        out[q] = {"votes": len(cast), "good": good, "share_good": share, "redundant": sum(redundant.values()),
                  "redundant_with": redundant.most_common(1)[0][0] if redundant else None, "kept": keep,
                  "overridden": q in overrides}
    return out


def done_judgments(campaign, **filters):
    from annotation.models import Assignment, Judgment

    return (Judgment.objects.filter(campaign=campaign, assignment__status=Assignment.Status.COMPLETED,
                                    answer__isnull=False, **filters).order_by("pk"))


def completed_per_hit(campaign) -> dict[int, int]:
    from django.db.models import Count

    from annotation.models import Assignment

    return dict(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED)
                .values_list("hit_id").annotate(n=Count("pk")).values_list("hit_id", "n"))


def used_keys(stage, key: str) -> set:
    from annotation.models import HitItem

    return {p.get(key) for p in HitItem.objects.filter(hit__campaign=stage).values_list("payload", flat=True)}


def vote_summary(decision: dict) -> str:
    votes = decision.get("votes", 0)
    good = decision.get("share_good")
    parts = [f"{votes} vote{'s' * (votes != 1)}"]
    if good is not None:
        parts.append(f"{good:.0%} good")
    if decision.get("redundant_with"):
        parts.append(f"redundant with {decision['redundant_with']}")
    return ", ".join(parts)


def kept_questions(vote_stage, vote_hit_id: int) -> tuple[list[dict], dict[str, dict]]:
    """The kept questions of one article (one vote HIT), in order, as {id, question, sample}, and every
    question's selection (`select_questions`)."""
    from annotation.models import HitItem

    items = list(HitItem.objects.filter(hit_id=vote_hit_id).order_by("position").values_list("pk", "text", "payload"))
    votes: dict[str, list] = {}
    ids = {pk: payload["question"] for pk, _, payload in items}
    for item, answer in done_judgments(vote_stage, item_id__in=ids).values_list("item_id", "answer"):
        votes.setdefault(ids[item], []).append((bool(answer["good"]), answer.get("redundant_with")))
    options = vote_stage.options or {}
    selection = select_questions([p["question"] for _, _, p in items], votes,
                                 float(options.get("vote_threshold", 0.5)), options.get("question_overrides") or {})
    kept = [{"id": p["question"], "question": text, "sample": p["sample"]} for _, text, p in items
            if selection[p["question"]]["kept"]]
    return kept, selection


def set_override(vote_stage, question: str, keep: bool | None) -> None:
    """The researcher keeps (True) or drops (False) a question whatever the votes, or gives it back to the votes
    (None). Only answer HITs built afterwards see the change (built HITs keep their questions)."""
    options = dict(vote_stage.options or {})
    overrides = dict(options.get("question_overrides") or {})
    if keep is None:
        overrides.pop(question, None)
    else:
        overrides[question] = bool(keep)
    options["question_overrides"] = overrides
    vote_stage.options = options
    vote_stage.save(update_fields=["options"])
