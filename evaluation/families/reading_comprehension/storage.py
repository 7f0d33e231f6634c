"""Compute and store a reading-comprehension task's results (docs/methods.md §9; Callison-Burch 2009 §5.3): per
question its votes, whether it was kept and its difficulty; per answer its grades; per system (the human
translation as a control row) the share of questions answered correctly with its 95 % Wilson score interval,
rank ranges and clusters from a one-sided pooled two-proportion z-test between neighbours. The results belong to
the task's first stage (the write campaign); a later stage computes its root's."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Max

from annotation.models import Assignment, Campaign, Hit, HitItem, Judgment, System
from annotation.protocols.reading_comprehension import kept_questions
from annotation.services.stages import first_stage as root_of

from ...models import CampaignResults
from ...services.storing import finite, jsonable, replace_results
from ...stats import clusters as cluster_systems
from ...stats import comprehension as rc

HUMAN = "human translation"


def stages_of(root: Campaign) -> dict[str, Campaign]:
    """The task's stages by name: write (the root), vote, answer, grade (those created)."""
    out, frontier = {"write": root}, [root]
    while frontier:
        frontier = list(Campaign.objects.filter(stage_input__in=frontier).order_by("pk"))
        out.update({c.stage_name: c for c in frontier})
    return out


def _completed(campaign: Campaign | None):
    if campaign is None:
        return Judgment.objects.none()
    return Judgment.objects.filter(campaign=campaign, answer__isnull=False,
                                   assignment__status=Assignment.Status.COMPLETED)


#: The headers of the stored tables, for their downloads while a table has no rows yet (`Family.stored_table`).
SYSTEMS = ("system", "score", "score_name", "n", "correct", "low", "high", "interval", "rank", "rank_range", "cluster",
           "is_control")
QUESTIONS = ("question_id", "doc_id", "question", "sample_answer", "flags", "author", "votes", "good", "share_good",
             "redundant", "redundant_with", "kept", "overridden", "answers", "difficulty", "human_correct")
ANSWERS = ("system", "question_id", "question", "sample_answer", "answer", "answerer", "grades_correct", "grades",
           "graded", "correct")
SIGNIFICANCE = ("system", "opponent", "p_value")


def question_rows(root: Campaign, vote: Campaign | None) -> list[dict]:
    """Every question written, with its votes and whether it is kept (`kept_questions`' selection)."""
    docs = dict(HitItem.objects.filter(hit__campaign=root).values_list("pk", "segment__document__doc_id"))
    rows = []
    if vote is None:
        return rows
    for hit in Hit.objects.filter(campaign=vote).order_by("number").values_list("pk", flat=True):
        _, selection = kept_questions(vote, hit)
        for text, payload in HitItem.objects.filter(hit_id=hit).order_by("position").values_list("text", "payload"):
            chosen = selection[payload["question"]]
            rows.append({"question_id": payload["question"], "doc_id": docs.get(payload["write_item"], ""),
                         "question": text, "sample_answer": payload["sample"], "flags": payload.get("flags", []),
                         "author": payload["author"], **chosen})
    return rows


def compute_reading_comprehension(campaign: Campaign) -> CampaignResults | None:
    root = root_of(campaign)
    started = time.perf_counter()
    stages = stages_of(root)
    vote, answer, grade = stages.get("vote"), stages.get("answer"), stages.get("grade")
    last_id = Judgment.objects.filter(campaign__in=[c for c in stages.values()]).aggregate(m=Max("id"))["m"] or 0
    questions = question_rows(root, vote)
    if not questions:
        return None
    names = dict(System.objects.filter(campaign=root).values_list("pk", "name"))
    system_pks = sorted(names)
    labels = [names[pk] for pk in system_pks] + [HUMAN]
    code = {pk: i for i, pk in enumerate(system_pks)}
    code[None] = len(system_pks)
    votes: dict[tuple[int, str], list[bool]] = {}
    for given, payload in _completed(grade).values_list("answer", "item__payload"):
        votes.setdefault((payload["judgment"], payload["question"]), []).append(bool(given["correct"]))
    answers = []
    for pk, worker, given, payload in _completed(answer).order_by("pk").values_list(
            "pk", "annotator__external_id", "answer", "item__payload"):
        for q in payload["questions"]:
            text = given["answers"].get(q["id"], "")
            cast = votes.get((pk, q["id"]), [])
            correct = bool(rc.majority(sum(cast), len(cast))) if text else False
            answers.append({"system": labels[code[payload.get("system")]], "code": code[payload.get("system")],
                            "question_id": q["id"], "question": q["question"], "sample_answer": q["sample"],
                            "answer": text, "answerer": worker or "", "grades_correct": sum(cast),
                            "grades": len(cast), "graded": bool(cast) or not text, "correct": correct})
    decided = [a for a in answers if a["graded"]]
    n_sys = len(labels)
    k = np.bincount([a["code"] for a in decided], weights=[a["correct"] for a in decided], minlength=n_sys)
    n = np.bincount([a["code"] for a in decided], minlength=n_sys).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, k / n, np.nan)
    low, high = rc.wilson_interval(k, n)
    p = rc.two_proportion_p(k, n)
    ranked = cluster_systems(share, p, 0.05, rule="adjacent")
    systems = sorted(({"system": labels[i], "score": finite(share[i]), "score_name": "correct", "n": int(n[i]),
                       "correct": int(k[i]), "low": finite(low[i]), "high": finite(high[i]),
                       "interval": "wilson-95", "rank": int(ranked.rank[i]),
                       "rank_range": [int(ranked.rank_low[i]), int(ranked.rank_high[i])],
                       "cluster": int(ranked.cluster[i]), "is_control": i == n_sys - 1}
                      for i in range(n_sys) if n[i]), key=lambda r: (r["rank"], r["system"]))
    per_q: dict[str, list] = {}
    for a in decided:
        per_q.setdefault(a["question_id"], []).append(a)
    for q in questions:
        mt = [a["correct"] for a in per_q.get(q["question_id"], []) if a["code"] != n_sys - 1]
        human = [a["correct"] for a in per_q.get(q["question_id"], []) if a["code"] == n_sys - 1]
        q["answers"] = len(mt)
        q["difficulty"] = finite(sum(mt) / len(mt)) if mt else None
        q["human_correct"] = finite(sum(human) / len(human)) if human else None
    significance = [{"system": labels[i], "opponent": labels[j], "p_value": finite(p[i, j])}
                    for i in range(n_sys) for j in range(n_sys) if i != j and n[i] and n[j]]
    answer_rows = [{key: v for key, v in a.items() if key != "code"} for a in answers]
    summary = {"score_name": "correct", "systems": len(system_pks), "questions": len(questions),
               "questions_kept": sum(1 for q in questions if q["kept"]), "answers": len(answers),
               "answers_graded": len(decided), "interval": "wilson-95",
               "stages": {name: c.slug for name, c in stages.items()}}
    return replace_results(root, {}, {
        "seconds": time.perf_counter() - started, "judgments": len(answers), "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""},
        tables={"systems": systems, "questions": questions, "answers": answer_rows, "significance": significance})


__all__ = ["ANSWERS", "HUMAN", "QUESTIONS", "SIGNIFICANCE", "SYSTEMS", "compute_reading_comprehension", "root_of",
           "stages_of"]
