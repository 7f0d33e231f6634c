"""Compute and store a post-editing task's results (docs/methods.md §9): per edit its verification votes and TER,
per output the closest passing edit, per system HTER with rank ranges and clusters, and HTER against the number
of editors. The results belong to the task's first stage (the edit campaign); a verify stage computes its
input's."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Max

from annotation.models import Assignment, Campaign, HitItem, Judgment, Segment, System, SystemOutput
from annotation.protocols.post_edit import screen_rows
from annotation.services.stages import first_stage as root_of
from annotation.services.stages import task_judgments

from ...models import CampaignResults, WorkerResult
from ...services.storing import finite, jsonable, replace_results
from ...stats import clusters as cluster_systems
from ...stats import error_spans as es
from ...stats import hter

CURVE_REPEATS = 50


#: The headers of the stored tables, for their downloads while a table has no rows yet (`Family.stored_table`).
SYSTEMS = ("system", "score", "score_name", "n", "rank", "rank_range", "cluster", "edits", "reference_words",
           "ter_against_references")
EDITS = ("system", "doc_id", "seg_id", "editor", "mt", "edit", "votes_yes", "votes", "passed", "ter", "chosen")
CURVE = ("editors", "system", "hter")
SIGNIFICANCE = ("system", "opponent", "p_value", "shared_items")


def compute_post_edit(campaign: Campaign) -> CampaignResults | None:
    campaign = root_of(campaign)
    started = time.perf_counter()
    verify = Campaign.objects.filter(stage_input=campaign).first()
    last_id = task_judgments(campaign).aggregate(m=Max("id"))["m"] or 0  # every stage's: the page counts them all
    edits = list(Judgment.objects.filter(campaign=campaign, id__lte=last_id, answer__isnull=False,
                                         assignment__status=Assignment.Status.COMPLETED)
                 .order_by("pk").values_list("pk", "annotator_id", "annotator__external_id", "answer", "item_id"))
    if not edits:
        return None
    votes: dict[tuple[int, int], list[bool]] = {}
    if verify is not None:
        for answer, payload in (Judgment.objects.filter(campaign=verify, answer__isnull=False)
                                .values_list("answer", "item__payload")):
            votes.setdefault((payload["judgment"], payload["index"]), []).append(
                bool(answer.get("same_meaning")) and bool(answer.get("acceptable")))
    system_pks = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    names = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("name", flat=True))
    outputs = list(SystemOutput.objects.filter(campaign=campaign).order_by("pk")
                   .values_list("pk", "system_id", "segment_id", "text"))
    output_code = {pk: i for i, (pk, *_rest) in enumerate(outputs)}
    segments = {pk: (doc, seg, ref) for pk, doc, seg, ref in Segment.objects.filter(campaign=campaign)
                .values_list("pk", "document__doc_id", "seg_id", "reference")}
    screens = screen_rows(HitItem.objects.filter(pk__in={e[4] for e in edits}).select_related("segment", "output"))
    rows = [(pk, editor, label, k, text, screens[item][k].output_id) for pk, editor, label, answer, item in edits
            for k, text in enumerate(answer["edits"])]
    edit_output = np.array([output_code[r[5]] for r in rows], dtype=np.int64)
    mt = [outputs[o][3] for o in edit_output]
    edit_edits, edit_lengths = hter.ter_counts(mt, [r[4] for r in rows])
    yes = np.array([sum(votes.get((r[0], r[3]), [])) for r in rows])
    cast = np.array([len(votes.get((r[0], r[3]), [])) for r in rows])
    passed = 2 * yes > cast
    passed &= cast > 0
    output_system = np.searchsorted(np.asarray(system_pks), np.array([o[1] for o in outputs], dtype=np.int64))
    edited = np.zeros(len(outputs), bool)
    edited[edit_output] = True
    reference_edits, reference_lengths = hter.ter_counts([o[3] for o in outputs],
                                                         [segments[o[2]][2] for o in outputs])
    chosen = hter.choose_closest(edit_output, edit_edits, edit_lengths, passed, reference_edits, reference_lengths)
    counted = edited  # outputs nobody edited yet are not scored
    system_hter = hter.corpus_hter(output_system[counted], chosen.edits[counted], chosen.lengths[counted],
                                   len(names))
    editors_per_output = np.bincount(edit_output, minlength=len(outputs))
    max_editors = int(editors_per_output.max(initial=0))
    curve = hter.editors_curve(edit_output, edit_edits, edit_lengths, passed, reference_edits, reference_lengths,
                               np.where(counted, output_system, len(names)), len(names) + 1, max_editors,
                               CURVE_REPEATS, int(campaign.seed or 0))[:, :len(names)]
    # Significance: sentence HTER paired on segments, one-sided Wilcoxon, a boundary between neighbours (as
    # WMT25 does for ESA).
    sentence = 100 * np.where(chosen.lengths > 0, chosen.edits / np.maximum(chosen.lengths, 1e-12), 0.0)
    keys = np.array([o[2] for o in outputs], dtype=np.int64)
    significance = es.paired_significance(output_system[counted], keys[counted], -sentence[counted], len(names),
                                          method="wmt25")
    ranked = cluster_systems(np.where(np.isfinite(system_hter), -system_hter, np.nan), significance.p, 0.05,
                             rule="adjacent")
    n_outputs = np.bincount(output_system[counted], minlength=len(names))
    systems = sorted(({"system": names[i], "score": finite(system_hter[i]), "score_name": "hter",
                       "n": int(n_outputs[i]), "rank": int(ranked.rank[i]),
                       "rank_range": [int(ranked.rank_low[i]), int(ranked.rank_high[i])],
                       "cluster": int(ranked.cluster[i]),
                       "edits": int(sum(chosen.edits[counted & (output_system == i)])),
                       "reference_words": int(sum(chosen.lengths[counted & (output_system == i)])),
                       "ter_against_references": finite(curve[0, i])}
                      for i in range(len(names)) if n_outputs[i]), key=lambda r: (r["rank"], r["system"]))
    edit_rows = [{"system": names[output_system[o]], "doc_id": segments[outputs[o][2]][0],
                  "seg_id": segments[outputs[o][2]][1], "editor": r[2] or "", "mt": outputs[o][3], "edit": r[4],
                  "votes_yes": int(yes[i]), "votes": int(cast[i]), "passed": bool(passed[i]),
                  "ter": finite(100 * edit_edits[i] / edit_lengths[i]) if edit_lengths[i] else None,
                  "chosen": bool(chosen.edit_row[o] == i)} for i, (r, o) in enumerate(zip(rows, edit_output,
                                                                                            strict=True))]
    curve_rows = [{"editors": k, "system": names[i], "hter": finite(curve[k, i])}
                  for k in range(curve.shape[0]) for i in range(len(names)) if n_outputs[i]]
    editors = sorted({(r[1], r[2]) for r in rows})
    editor_of = np.searchsorted(np.array([a for a, _ in editors]), np.array([r[1] for r in rows]))
    edits_by = dict(zip((a for a, _ in editors), np.bincount(editor_of, minlength=len(editors)).tolist(),
                        strict=True))
    passed_by = dict(zip((a for a, _ in editors), np.bincount(editor_of, weights=passed, minlength=len(editors))
                         .astype(int).tolist(), strict=True))
    workers = [WorkerResult(campaign=campaign, annotator_id=a, worker=label or "", hits=0, judgments=edits_by[a],
                            pairs=edits_by[a], test="verification", p_value=None,
                            reliable=passed_by[a] * 2 >= edits_by[a], mean_seconds=None) for a, label in editors]
    summary = {"score_name": "hter", "systems": len(names), "edits": len(rows), "edits_passed": int(passed.sum()),
               "edits_verified": int((cast > 0).sum()), "outputs_edited": int(counted.sum()),
               "max_editors": max_editors, "curve_repeats": CURVE_REPEATS,
               "verify_campaign": verify.slug if verify else None, "workers": len(editors),
               "reliable_workers": int(sum(passed_by[a] * 2 >= edits_by[a] for a, _ in editors))}
    return replace_results(campaign, {WorkerResult: workers}, {
        "seconds": time.perf_counter() - started, "judgments": len(edits), "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""},
        tables={"systems": systems, "edits": edit_rows, "curve": curve_rows,
                "significance": [{"system": names[i], "opponent": names[j], "p_value": finite(significance.p[i, j]),
                                  "shared_items": int(significance.n[i, j])} for i in range(len(names))
                                 for j in range(len(names)) if i != j and significance.n[i, j]]})


__all__ = ["CURVE", "EDITS", "SIGNIFICANCE", "SYSTEMS", "compute_post_edit", "root_of"]
