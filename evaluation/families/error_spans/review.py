"""Results of the review stage of an error-span task (docs/methods.md "Review of error spans"), stored with the
first stage's results: scores from the reviewed annotations beside the first pass's (`review_systems`), how often
reviewers kept, changed and deleted each first-pass rater's spans by category and severity (`review_changes`), and
each first-pass rater's precision and recall against the reviewed spans, exact and lenient (`review_raters`).

A *review* is one reviewer's judgment of one first-pass annotation; when a reviewer judged the same first-pass
annotation twice, the later judgment counts."""
from __future__ import annotations

import numpy as np

from annotation.models import Campaign, Judgment

from ...services.storing import finite
from ...stats import span_review as sr
from ...stats.error_spans import GOOGLE, MQM_PRESETS, error_weights

#: The stored tables and their columns (for downloads while a table has no rows).
TABLES = {
    "review_systems": ("system", "score_name", "reviews", "first_pass_score", "reviewed_score"),
    "review_changes": ("first_rater", "category", "severity", "spans", "kept", "changed", "deleted", "kept_share",
                       "changed_share", "deleted_share"),
    "review_raters": ("first_rater", "reviews", "first_pass_spans", "reviewed_spans", "added", "precision_exact",
                      "recall_exact", "precision_lenient", "recall_lenient"),
}
ACTION_CODE = {name: code for code, name in enumerate(sr.ACTIONS)}


def _codes(names: dict, name) -> int:
    return names.setdefault(name, len(names))


def _reviews(stage: Campaign) -> list[tuple]:
    """The stage's reviews, the later judgment of a reviewer on the same first-pass annotation winning."""
    rows = (Judgment.objects.filter(campaign=stage, answer__isnull=False, spans__isnull=False).order_by("pk")
            .values_list("annotator_id", "item__payload", "item__output__system__name", "score", "spans", "answer"))
    latest: dict[tuple, tuple] = {}
    for reviewer, payload, system, score, spans, answer in rows:
        latest[(reviewer, payload.get("judgment"), payload.get("output"))] = (payload, system, score, spans, answer)
    return list(latest.values())


def review_tables(root: Campaign) -> dict[str, list[dict]]:
    """The review tables of the task whose first stage is `root` (empty lists when it has no review stage)."""
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    stage = Campaign.objects.filter(stage_input=root, stage_name="review").order_by("pk").first()
    reviews = _reviews(stage) if stage is not None else []
    if not reviews:
        return tables
    kind = "mqm" if root.protocol_spec.mqm else "esa"
    weights = MQM_PRESETS.get((root.options or {}).get("mqm_weights", "google"), GOOGLE)
    raters, systems, categories, severities = {}, {}, {"": 0}, {}
    first_scores = dict(Judgment.objects.filter(pk__in=[p.get("judgment") for p, *_ in reviews if p.get("judgment")])
                        .values_list("pk", "score"))
    unit_rater, unit_system, unit_score, unit_first_score = [], [], [], []
    first = {k: [] for k in ("unit", "start", "end", "severity", "category", "action")}
    reviewed = {k: [] for k in ("unit", "start", "end", "severity", "category", "origin")}
    for u, (payload, system, score, spans, answer) in enumerate(reviews):
        unit_rater.append(_codes(raters, answer.get("first_rater") or payload.get("rater") or ""))
        unit_system.append(_codes(systems, system))
        unit_score.append(np.nan if score is None else score)
        first_score = first_scores.get(payload.get("judgment"))
        unit_first_score.append(np.nan if first_score is None else first_score)
        for entry in answer.get("review") or ():
            span = entry["from"]
            for key, value in (("unit", u), ("start", span["start"]), ("end", span["end"]),
                               ("severity", _codes(severities, span["severity"])),
                               ("category", _codes(categories, span.get("category", ""))),
                               ("action", ACTION_CODE[entry["action"]])):
                first[key].append(value)
        for span in spans:
            for key, value in (("unit", u), ("start", span["start"]), ("end", span["end"]),
                               ("severity", _codes(severities, span["severity"])),
                               ("category", _codes(categories, span.get("category", ""))),
                               ("origin", span.get("origin", "added"))):
                reviewed[key].append(value)
    first_arrays = {k: np.asarray(v, dtype=np.int64) for k, v in first.items()}
    reviewed_arrays = {k: np.asarray(v, dtype=np.int64) for k, v in reviewed.items() if k != "origin"}
    unit_rater_a = np.asarray(unit_rater, dtype=np.int64)
    rater_names, category_names, severity_names = list(raters), list(categories), list(severities)
    n_units = len(reviews)

    if kind == "mqm":
        def penalty(table):
            w = error_weights(category_names, severity_names, table["category"], table["severity"],
                              np.zeros(table["unit"].size, bool), weights)
            return -np.bincount(table["unit"], weights=w, minlength=n_units)
        first_unit, reviewed_unit = penalty(first_arrays), penalty(reviewed_arrays)
    else:
        first_unit, reviewed_unit = np.asarray(unit_first_score, float), np.asarray(unit_score, float)
    system_a = np.asarray(unit_system, dtype=np.int64)
    for s, name in enumerate(systems):
        mine = system_a == s
        tables["review_systems"].append({
            "system": name, "score_name": kind, "reviews": int(mine.sum()),
            "first_pass_score": finite(np.nanmean(first_unit[mine])) if np.isfinite(first_unit[mine]).any() else None,
            "reviewed_score": finite(np.nanmean(reviewed_unit[mine])) if np.isfinite(reviewed_unit[mine]).any()
            else None})
    tables["review_systems"].sort(key=lambda r: (-(r["reviewed_score"] if r["reviewed_score"] is not None
                                                  else -np.inf), r["system"]))

    changes = sr.change_counts(unit_rater_a[first_arrays["unit"]], first_arrays["category"],
                               first_arrays["severity"], first_arrays["action"], len(rater_names),
                               len(category_names), len(severity_names))
    for r, c, v in zip(*np.nonzero(changes.counts.sum(axis=-1)), strict=True):
        counts, shares = changes.counts[r, c, v], changes.shares[r, c, v]
        tables["review_changes"].append({
            "first_rater": rater_names[r], "category": category_names[c], "severity": severity_names[v],
            "spans": int(counts.sum()), **{a: int(counts[k]) for k, a in enumerate(sr.ACTIONS)},
            **{f"{a}_share": finite(shares[k]) for k, a in enumerate(sr.ACTIONS)}})

    exact = sr.rater_precision_recall(first_arrays, reviewed_arrays, unit_rater_a, len(rater_names), "exact")
    lenient = sr.rater_precision_recall(first_arrays, reviewed_arrays, unit_rater_a, len(rater_names), "lenient")
    added = np.bincount(unit_rater_a[reviewed_arrays["unit"]],
                        weights=np.asarray([o == "added" for o in reviewed["origin"]], float),
                        minlength=len(rater_names))
    per_rater = np.bincount(unit_rater_a, minlength=len(rater_names))
    for r, name in enumerate(rater_names):
        tables["review_raters"].append({
            "first_rater": name, "reviews": int(per_rater[r]), "first_pass_spans": int(exact.first[r]),
            "reviewed_spans": int(exact.reviewed[r]), "added": int(added[r]),
            "precision_exact": finite(exact.precision[r]), "recall_exact": finite(exact.recall[r]),
            "precision_lenient": finite(lenient.precision[r]), "recall_lenient": finite(lenient.recall[r])})
    return tables


__all__ = ["TABLES", "review_tables"]
