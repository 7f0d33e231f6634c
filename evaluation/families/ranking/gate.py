"""The live reliability gate for relative ranking (docs/methods.md §12.1): after each HIT a worker finishes, the
gold check of §8.4 runs over all their gold screens so far in the campaign. Only that worker's gold screens are
loaded (one query, the slots expanded in the database as in loading.py).

A gold screen is right by the protocol's rule (`gold_correct`: best, the gold ranked 1; best-worst, the gold in
the top half and the known-bad output in the bottom half). The rule (campaign options):

- `gate_rule` "test" (the default): stop the worker when, after at least `gate_min_pairs` gold screens (5), they
  do not rank gold right more often than chance: the one-sided exact binomial test (Poisson-binomial where
  screens differ in N) against a judge who orders each screen at random, p ≥ `qc_threshold` (0.05).
- `gate_rule` "missed": stop the worker when, after at least `gate_min_pairs` gold screens, the share they ranked
  wrong is at least `gate_max_missed` (0.5).

Campaigns without gold units (`gold` none) have nothing to gate on: no verdict.
"""
from __future__ import annotations

import numpy as np
from django.db import connection

from annotation.models import Campaign, HitItem, Judgment

from ...stats import ranking as rk
from ...stats.gold_chance import above_chance, chance_right
from ..base import GateVerdict

DEFAULT_MIN_GOLD = 5
DEFAULT_MAX_MISSED = 0.5
TEST_NAME = "gold-binomial"

# One worker's gold screens, slot by slot: judgment, item, the slot's kind and rank.
_POSTGRES = """
SELECT j.id, j.item_id, c.value ->> 'kind', (j.ranks ->> (c.value ->> 'key'))::int
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
CROSS JOIN LATERAL jsonb_array_elements(i.payload -> 'candidates') AS c(value)
WHERE j.campaign_id = %s AND j.annotator_id = %s AND i.item_type = 'gold' AND j.ranks IS NOT NULL
ORDER BY j.id
"""
_SQLITE = """
SELECT j.id, j.item_id, json_extract(c.value, '$.kind'),
       json_extract(j.ranks, '$."' || json_extract(c.value, '$.key') || '"')
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id, json_each(i.payload, '$.candidates') AS c
WHERE j.campaign_id = %s AND j.annotator_id = %s AND i.item_type = 'gold' AND j.ranks IS NOT NULL
ORDER BY j.id
"""


def gold_screens(campaign: Campaign, annotator_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One worker's gold screens (the latest judgment of each): (right?, N, best-worst?) per screen."""
    template = _POSTGRES if connection.vendor == "postgresql" else _SQLITE
    sql = template.format(judgment=connection.ops.quote_name(Judgment._meta.db_table),
                          item=connection.ops.quote_name(HitItem._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, annotator_id])
        rows = [r for r in cursor.fetchall() if r[3] is not None]
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, bool), empty, np.zeros(0, bool)
    judgment, item, kind, rank = (np.array(column) for column in zip(*rows, strict=True))
    judgment, item, rank = judgment.astype(np.int64), item.astype(np.int64), rank.astype(np.int64)
    screens, screen = np.unique(judgment, return_inverse=True)
    screen = screen.ravel()
    n_candidates = np.bincount(screen, minlength=screens.size)
    rank_gold = np.full(screens.size, -1, dtype=np.int64)
    rank_bad = np.full(screens.size, -1, dtype=np.int64)
    rank_gold[screen[kind == "gold"]] = rank[kind == "gold"]
    rank_bad[screen[kind == "bad"]] = rank[kind == "bad"]
    # a screen judged twice counts once, by its latest judgment (screens are in judgment-id order)
    screen_item = np.zeros(screens.size, dtype=np.int64)
    screen_item[screen] = item
    order = np.argsort(screen_item, kind="stable")
    keep = np.zeros(screens.size, dtype=bool)
    keep[order[np.r_[screen_item[order][1:] != screen_item[order][:-1], True]]] = True
    keep &= rank_gold > 0
    correct = rk.gold_correct(rank_gold[keep], rank_bad[keep], n_candidates[keep])
    return np.asarray(correct, dtype=bool), n_candidates[keep], rank_bad[keep] > 0


def gate(campaign: Campaign, annotator) -> GateVerdict | None:
    options = campaign.options or {}
    if options.get("gold", "none") == "none":
        return None
    correct, n_candidates, best_worst = gold_screens(campaign, annotator.pk)
    n_gold = int(correct.size)
    minimum = int(options.get("gate_min_pairs") or DEFAULT_MIN_GOLD)
    if n_gold == 0 or n_gold < minimum:
        return None
    n_wrong = int(n_gold - correct.sum())
    share = n_wrong / n_gold
    if (options.get("gate_rule") or "test") == "missed":
        limit = float(options.get("gate_max_missed") or DEFAULT_MAX_MISSED)
        if share < limit:
            return None
        return GateVerdict("missed", f"ranked {n_wrong} of {n_gold} gold screens wrong in this campaign: "
                           f"{share:.0%} ≥ {limit:.0%}", pairs=n_gold, missed_share=share)
    threshold = float(campaign.qc_threshold)
    chance = chance_right(n_candidates, best_worst)
    p = above_chance(correct, chance)
    if p < threshold:
        return None
    return GateVerdict("test", f"ranked {n_gold - n_wrong} of {n_gold} gold screens right in this campaign, not "
                       f"more often than a random order would ({float(chance.mean()):.0%} expected): one-sided "
                       f"exact binomial p = {p:.3g} ≥ {threshold:g}", test=TEST_NAME, p_value=p, pairs=n_gold,
                       missed_share=share)
