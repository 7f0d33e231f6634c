"""The live reliability gate for error spans: ESA, MQM, contrastive ESA and MQM side by side (docs/methods.md §12.1).

After each HIT a worker finishes, the family's perturbation test (§11.2) runs over all their (perturbed copy,
original) pairs so far, in the campaign or, with `reliability_scope` study, in every error-span campaign of its
study. Only that worker's judgments are loaded: a perturbed copy pairs with the same worker's judgment of its
original in the same HIT (ESA, MQM: the `bad_ref` item and the item at its `partner_position`; contrastive ESA:
the `bad` column and the column it degrades, `of`, in the same answer). Each pair compares the values the results
test: the 0–100 score (ESA, contrastive ESA), or minus the MQM penalty (MQM, MQM side by side: per column; weights
`mqm_weights`). An item judged twice counts once, by its latest judgment.

The rule (campaign options, as for Direct Assessment):

- `gate_rule` "test" (the default): stop the worker when, after at least `gate_min_pairs` pairs (5), the
  campaign's test (`qc_test`, the preset's one-sided Wilcoxon signed-rank by default) does not pass them at its
  threshold: p ≥ threshold under "lt", p > threshold under "le"; no p-value because every pair differs alike
  (e.g. every copy scored exactly like its original) does not pass. A test that needs exact repeats (`welch`,
  `mann-whitney`; error spans have none) gives no p-value on any worker, and no verdict.
- `gate_rule` "missed": stop the worker when, after at least `gate_min_pairs` pairs, the share of perturbed
  copies they did not score below their originals (MQM: did not give a larger penalty) is at least
  `gate_max_missed` (0.5). Whether the copy got a major error is not the criterion: a judge who scores the copy
  lower has noticed it, whatever span they marked.
"""
from __future__ import annotations

import numpy as np
from django.db import connection

from annotation.models import Campaign, HitItem, Judgment

from ... import reliability_tests
from ...presets import conventions_of, passes
from ...stats.error_spans import GOOGLE, MQM_PRESETS, error_weights
from ..base import GateVerdict, scope_campaigns
from .presets import FAMILY
from .storage import score_kind

DEFAULT_MIN_PAIRS = 5
DEFAULT_MAX_MISSED = 0.5

# Contrastive ESA: one worker's bad columns with the score of the column each degrades, in the same answer.
_CONTRASTIVE_PG = """
SELECT j.item_id, (j.scores ->> (c.value ->> 'key'))::float, (j.scores ->> (c.value ->> 'of'))::float
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
CROSS JOIN LATERAL jsonb_array_elements(i.payload -> 'candidates') AS c(value)
WHERE j.campaign_id = %s AND j.annotator_id = %s AND j.scores IS NOT NULL AND c.value ->> 'kind' = 'bad'
ORDER BY j.id
"""
_CONTRASTIVE_SQLITE = """
SELECT j.item_id, json_extract(j.scores, '$."' || json_extract(c.value, '$.key') || '"'),
       json_extract(j.scores, '$."' || json_extract(c.value, '$.of') || '"')
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id, json_each(i.payload, '$.candidates') AS c
WHERE j.campaign_id = %s AND j.annotator_id = %s AND j.scores IS NOT NULL
      AND json_extract(c.value, '$.kind') = 'bad'
ORDER BY j.id
"""


def _latest(key: np.ndarray) -> np.ndarray:
    """Rows (in judgment-id order) that are the last of their key."""
    order = np.argsort(key, kind="stable")
    last = np.zeros(key.size, dtype=bool)
    last[order[np.r_[key[order][1:] != key[order][:-1], True]]] = True
    return last


def _penalties(spans: list, weights) -> np.ndarray:
    """Each judgment's MQM penalty: the sum of its spans' error weights (docs/methods.md §11.3)."""
    errors = [(row, s.get("category") or "", s["severity"], s.get("side", "target") == "source")
              for row, listed in enumerate(spans) if isinstance(listed, list)
              for s in listed if isinstance(s, dict) and s.get("severity") is not None]
    if not errors:
        return np.zeros(len(spans))
    row, category, severity, side = zip(*errors, strict=True)
    categories, severities = sorted(set(category)), sorted(set(severity))
    w = error_weights(categories, severities, np.searchsorted(categories, category),
                      np.searchsorted(severities, severity), side, weights)
    return np.bincount(np.asarray(row, dtype=np.int64), weights=w, minlength=len(spans))


def _single_pairs(campaign: Campaign, annotator_id: int) -> tuple[np.ndarray, np.ndarray]:
    """ESA and MQM: (perturbed copy's value, original's value) per pair, from the worker's judgments of items that
    belong to a pair (both members carry `partner_position`)."""
    mqm = score_kind(campaign) == "mqm"
    judged = Judgment.objects.filter(campaign=campaign, annotator_id=annotator_id,
                                     item__partner_position__isnull=False)
    if not mqm:
        judged = judged.filter(score__isnull=False)
    rows = list(judged.order_by("id").values_list("item__hit_id", "item__position", "item__partner_position",
                                                  "item__item_type", "score", "spans"))
    if not rows:
        return np.zeros(0), np.zeros(0)
    hit, position, partner, item_type, score, spans = zip(*rows, strict=True)
    hit, position, partner = (np.asarray(a, dtype=np.int64) for a in (hit, position, partner))
    if mqm:
        options = campaign.options or {}
        value = -_penalties(list(spans), MQM_PRESETS.get(options.get("mqm_weights", "google"), GOOGLE))
    else:
        value = np.asarray(score, dtype=np.float64)
    width = int(max(position.max(), partner.max())) + 1
    key = hit * width + position
    latest = _latest(key)
    bad = latest & (np.asarray(item_type) == "bad_ref")
    original = np.flatnonzero(latest & ~bad)
    original = original[np.argsort(key[original])]
    wanted = hit[bad] * width + partner[bad]
    found = np.searchsorted(key[original], wanted)
    found = np.minimum(found, max(original.size - 1, 0))
    matched = (key[original][found] == wanted) if original.size else np.zeros(wanted.size, dtype=bool)
    return value[bad][matched], value[original[found[matched]]]


def _side_by_side_mqm_pairs(campaign: Campaign, annotator_id: int) -> tuple[np.ndarray, np.ndarray]:
    """MQM side by side (no scores): (minus the bad column's penalty, minus its original column's) per pair, from
    the spans of each column of the worker's latest answer to each item."""
    rows = list(Judgment.objects.filter(campaign=campaign, annotator_id=annotator_id, item__payload__has_key=
                                        "candidates").order_by("id").values_list("item_id", "item__payload", "spans"))
    latest = {item: (payload, spans) for item, payload, spans in rows}
    columns = []  # per pair: the bad column's spans, then its original's
    for payload, spans in latest.values():
        for bad in (c for c in payload.get("candidates", ()) if c.get("kind") == "bad"):
            for key in (bad["key"], bad.get("of")):
                columns.append([s for s in spans or () if s.get("candidate") == key])
    if not columns:
        return np.zeros(0), np.zeros(0)
    options = campaign.options or {}
    value = -_penalties(columns, MQM_PRESETS.get(options.get("mqm_weights", "google"), GOOGLE))
    return value[0::2], value[1::2]


def _contrastive_pairs(campaign: Campaign, annotator_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Contrastive ESA: (bad column's score, its original column's score) per pair, in the worker's answers."""
    if score_kind(campaign) == "mqm":
        return _side_by_side_mqm_pairs(campaign, annotator_id)
    sql = (_CONTRASTIVE_PG if connection.vendor == "postgresql" else _CONTRASTIVE_SQLITE).format(
        judgment=connection.ops.quote_name(Judgment._meta.db_table),
        item=connection.ops.quote_name(HitItem._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, annotator_id])
        rows = cursor.fetchall()
    if not rows:
        return np.zeros(0), np.zeros(0)
    item, bad, original = zip(*rows, strict=True)
    item = np.asarray(item, dtype=np.int64)
    bad = np.array([np.nan if v is None else v for v in bad], dtype=np.float64)
    original = np.array([np.nan if v is None else v for v in original], dtype=np.float64)
    # an item answered twice: its latest answer's columns (one bad column per item)
    latest = _latest(item)
    return bad[latest], original[latest]


def worker_pairs(campaign: Campaign, annotator_id: int) -> tuple[np.ndarray, np.ndarray]:
    """One worker's (perturbed, original) value pairs in one campaign, both finite."""
    if campaign.protocol_spec.contrastive:
        bad, original = _contrastive_pairs(campaign, annotator_id)
    else:
        bad, original = _single_pairs(campaign, annotator_id)
    finite = np.isfinite(bad) & np.isfinite(original)
    return bad[finite], original[finite]


def paired_test(test: str, bad: np.ndarray, original: np.ndarray, threshold: float) -> tuple[float, int]:
    """(p, pairs used) of the reliability test `test` on one worker's pairs (docs/methods.md §4)."""
    n = bad.size
    pairs = reliability_tests.QualityPairs(
        worker=np.zeros(2 * n, dtype=np.int64), score=np.r_[bad, original], z=np.r_[bad, original],
        bad=np.arange(n), bad_orig=np.arange(n, 2 * n), rep=np.zeros(0, np.int64), rep_orig=np.zeros(0, np.int64),
        n_workers=1)
    p, used, _ = reliability_tests.run(test, pairs, threshold)
    return float(np.asarray(p, dtype=np.float64)[0]), int(np.asarray(used)[0])


def gate(campaign: Campaign, annotator) -> GateVerdict | None:
    options = campaign.options or {}
    conventions = conventions_of(campaign, FAMILY)
    minimum = int(options.get("gate_min_pairs") or DEFAULT_MIN_PAIRS)
    scope = scope_campaigns(campaign, conventions.scope)
    found = [worker_pairs(c, annotator.pk) for c in scope]
    bad = np.concatenate([b for b, _ in found])
    original = np.concatenate([o for _, o in found])
    if bad.size == 0:
        return None
    where = "in the study" if conventions.scope == "study" and campaign.study_id else "in this campaign"
    n_pairs = int(bad.size)
    n_missed = int(np.sum(bad >= original))
    share = n_missed / n_pairs
    if (options.get("gate_rule") or "test") == "missed":
        limit = float(options.get("gate_max_missed") or DEFAULT_MAX_MISSED)
        if n_pairs < minimum or share < limit:
            return None
        below = "give them a larger MQM penalty than" if score_kind(campaign) == "mqm" else "score them below"
        return GateVerdict("missed", f"missed {n_missed} of {n_pairs} perturbed copies {where} (did not {below} "
                           f"their originals): {share:.0%} ≥ {limit:.0%}", pairs=n_pairs, missed_share=share)
    test = conventions.test
    threshold = reliability_tests.threshold_in_use(test, conventions.threshold)
    p, used = paired_test(test, bad, original, threshold)
    if used < minimum or bool(passes(p, threshold, conventions.threshold_rule)):
        return None
    if not np.isfinite(p) and np.unique(bad - original).size > 1:
        return None  # the test does not apply to these pairs (welch, mann-whitney need repeats): no verdict
    sign = "≥" if conventions.threshold_rule == "lt" else ">"
    shown = f"p = {p:.3g} {sign} {threshold:g}" if np.isfinite(p) else "no p-value (the test cannot pass them)"
    return GateVerdict("test", f"failed the {test} perturbation test on {used} perturbed copies {where}: {shown}",
                       test=test, p_value=p if np.isfinite(p) else None, pairs=used, missed_share=share)
