"""Compute and store a crowd reference-translation task's results (docs/methods.md §9; Callison-Burch 2009 §5.1):
per translation its detect-MT votes and whether it is flagged, per translator the flagged share and whether they
are excluded, their leave-one-out BLEU against the other accepted translators and their BLEU against the
professional reference, and the accepted translations (the extra references). The results belong to the task's
first stage (the translate campaign); a detect stage computes its input's."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Max

from annotation.models import Assignment, Campaign, HitItem, Judgment
from annotation.protocols.reference_translation import screen_rows
from annotation.services.stages import first_stage as root_of
from annotation.services.stages import task_judgments

from ...models import CampaignResults, WorkerResult
from ...services.storing import finite, jsonable, replace_results
from ...stats import crowd_translation as ct

DEFAULT_THRESHOLD = 0.3


#: The headers of the stored tables, for their downloads while a table has no rows yet (`Family.stored_table`).
SYSTEMS = ("system", "score", "score_name", "n", "rank", "rank_range", "cluster", "sentences", "bleu_vs_professional",
           "professional_sentences", "judged_sentences", "flagged_share", "excluded", "pasted_share", "mt_copy_share",
           "repeated_share", "source_copy_share", "junk", "native_language", "target_language_years", "country")
TRANSLATIONS = ("doc_id", "seg_id", "translator", "translation", "pasted", "mt_copy", "repeated", "source_copy",
                "votes_machine", "votes", "flagged", "excluded")
ACCEPTED = ("doc_id", "seg_id", "translator", "translation")
MT = ("system", "votes_machine", "votes", "share_marked")


def compute_reference_translation(campaign: Campaign) -> CampaignResults | None:
    campaign = root_of(campaign)
    started = time.perf_counter()
    threshold = float((campaign.options or {}).get("flag_threshold", DEFAULT_THRESHOLD))
    detect = Campaign.objects.filter(stage_input=campaign).first()
    last_id = task_judgments(campaign).aggregate(m=Max("id"))["m"] or 0  # every stage's: the page counts them all
    judgments = list(Judgment.objects.filter(campaign=campaign, id__lte=last_id, answer__isnull=False,
                                             assignment__status=Assignment.Status.COMPLETED)
                     .order_by("pk").values_list("pk", "annotator_id", "annotator__external_id",
                                                 "annotator__user__username", "answer", "item_id"))
    if not judgments:
        return None
    # Detect-stage votes: per (translate judgment, sentence index), marked and cast; per system, the same.
    marked: dict[tuple[int, int], int] = {}
    cast: dict[tuple[int, int], int] = {}
    mt_marked: dict[str, int] = {}
    mt_cast: dict[str, int] = {}
    if detect is not None:
        for answer, payload in (Judgment.objects.filter(campaign=detect, id__lte=last_id, answer__isnull=False)
                                .values_list("answer", "item__payload")):
            machine = set(answer.get("machine") or ())
            for candidate in payload["candidates"]:
                hit = candidate["key"] in machine
                if "judgment" in candidate:
                    key = (candidate["judgment"], payload["index"])
                    cast[key] = cast.get(key, 0) + 1
                    marked[key] = marked.get(key, 0) + hit
                else:
                    mt_cast[candidate["system"]] = mt_cast.get(candidate["system"], 0) + 1
                    mt_marked[candidate["system"]] = mt_marked.get(candidate["system"], 0) + hit
    screens = screen_rows(HitItem.objects.filter(pk__in={j[5] for j in judgments}).select_related(
        "segment__document"))
    from annotation.models import Segment

    segments, segment_sources = {}, {}
    for pk, doc, seg, ref, source in (Segment.objects.filter(campaign=campaign)
                                      .values_list("pk", "document__doc_id", "seg_id", "reference", "source")):
        segments[pk], segment_sources[pk] = (doc, seg, ref or ""), source
    translators = sorted({(j[1], j[2] or j[3] or str(j[1])) for j in judgments})
    code = {a: i for i, (a, _) in enumerate(translators)}
    rows = []  # (judgment pk, translator code, index, segment pk, text, pasted, mt_copy)
    backgrounds: dict[int, dict] = {}
    for pk, annotator, _ext, _user, answer, item in judgments:
        if answer.get("background"):
            backgrounds[annotator] = answer["background"]  # the latest one answered
        for k, text in enumerate(answer["translations"]):
            rows.append((pk, code[annotator], k, screens[item][k].segment, text, bool(answer["pasted"][k]),
                         (answer.get("mt_copy") or [None] * (k + 1))[k]))
    junk = ct.junk_flags([(r[1], r[3], r[4], segment_sources[r[3]]) for r in rows])
    n = len(translators)
    who = np.array([r[1] for r in rows], dtype=np.int64)
    votes = np.array([cast.get((r[0], r[2]), 0) for r in rows])
    yes = np.array([marked.get((r[0], r[2]), 0) for r in rows])
    flagged = ct.majority_flagged(yes, votes)
    shares = ct.flagged_shares(who, flagged, votes > 0, n)
    out = ct.excluded(shares, threshold)
    accepted = {i for i in range(n) if not out[i]}
    texts: dict[int, dict[int, str]] = {i: {} for i in range(n)}
    for r in rows:
        texts[r[1]][r[3]] = r[4]
    loo = ct.leave_one_out_bleu(texts, accepted)
    professional = {i: ct.reference_bleu(texts[i], {s: segments[s][2] for s in texts[i]}) for i in range(n)}
    bleu = np.array([loo[i].bleu for i in range(n)])
    ranked = np.where(np.isfinite(bleu), bleu, -np.inf)
    rank = np.array([1 + int(np.sum(ranked > ranked[i])) for i in range(n)])
    pasted = np.bincount(who, weights=np.array([r[5] for r in rows], float), minlength=n)
    copied = np.bincount(who, weights=np.array([r[6] is not None for r in rows], float), minlength=n)
    sentences = np.bincount(who, minlength=n)
    judged = np.bincount(who[votes > 0], minlength=n)
    repeated = np.bincount(who, weights=np.array([f.repeated for f in junk], float), minlength=n)
    source_copies = np.bincount(who, weights=np.array([f.source_copy for f in junk], float), minlength=n)
    systems = sorted(({"system": label, "score": ct.printed(bleu[i]), "score_name": "bleu", "n": int(loo[i].sentences),
                       "rank": int(rank[i]), "rank_range": [int(rank[i]), int(rank[i])], "cluster": int(rank[i]),
                       "sentences": int(sentences[i]),
                       "bleu_vs_professional": ct.printed(professional[i].bleu),
                       "professional_sentences": int(professional[i].sentences),
                       "judged_sentences": int(judged[i]), "flagged_share": finite(shares[i]),
                       "excluded": bool(out[i]), "pasted_share": float(pasted[i] / sentences[i]),
                       "mt_copy_share": float(copied[i] / sentences[i]),
                       "repeated_share": float(repeated[i] / sentences[i]),
                       "source_copy_share": float(source_copies[i] / sentences[i]),
                       "junk": bool(repeated[i] or source_copies[i]),
                       "native_language": backgrounds.get(a, {}).get("native_language"),
                       "target_language_years": backgrounds.get(a, {}).get("target_language_years"),
                       "country": backgrounds.get(a, {}).get("country")}
                      for i, (a, label) in enumerate(translators)), key=lambda r: (r["rank"], r["system"]))
    translation_rows = [{"doc_id": segments[r[3]][0], "seg_id": segments[r[3]][1], "translator": translators[r[1]][1],
                         "translation": r[4], "pasted": r[5], "mt_copy": r[6], "repeated": junk[i].repeated,
                         "source_copy": junk[i].source_copy, "votes_machine": int(yes[i]),
                         "votes": int(votes[i]), "flagged": bool(flagged[i]), "excluded": bool(out[r[1]])}
                        for i, r in enumerate(rows)]
    translation_rows.sort(key=lambda r: (str(r["doc_id"]), r["seg_id"], r["translator"]))
    accepted_rows = [{k: r[k] for k in ("doc_id", "seg_id", "translator", "translation")}
                     for r in translation_rows if not r["excluded"]]
    mt_rows = [{"system": s, "votes_machine": mt_marked.get(s, 0), "votes": mt_cast[s],
                "share_marked": mt_marked.get(s, 0) / mt_cast[s]} for s in sorted(mt_cast)]
    workers = [WorkerResult(campaign=campaign, annotator_id=a, worker=label, hits=0, judgments=int(sentences[i]),
                            pairs=int(judged[i]), test="mt-detection", p_value=None, reliable=not bool(out[i]),
                            mean_seconds=None) for i, (a, label) in enumerate(translators)]
    summary = {"score_name": "bleu", "translators": n, "excluded": int(out.sum()), "translations": len(rows),
               "translations_judged": int((votes > 0).sum()), "translations_flagged": int(flagged.sum()),
               "accepted": len(accepted_rows), "junk_translators": int(np.sum((repeated + source_copies) > 0)),
               "flag_threshold": threshold,
               "mt_marked_share": (sum(mt_marked.values()) / sum(mt_cast.values())) if mt_cast else None,
               "detect_campaign": detect.slug if detect else None, "workers": n, "reliable_workers": len(accepted),
               # accepted translators with a leave-one-out BLEU: another accepted translator shares a sentence
               "accepted_scored": sum(1 for i in accepted if loo[i].sentences)}
    return replace_results(campaign, {WorkerResult: workers}, {
        # every stage's judgments up to last_id, as freshness counts the new ones after it (results_read.freshness)
        "seconds": time.perf_counter() - started, "judgments": task_judgments(campaign).filter(id__lte=last_id).count(),
        "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""},
        tables={"systems": systems, "translations": translation_rows, "accepted": accepted_rows, "mt": mt_rows})


__all__ = ["ACCEPTED", "MT", "SYSTEMS", "TRANSLATIONS", "compute_reference_translation", "root_of"]
