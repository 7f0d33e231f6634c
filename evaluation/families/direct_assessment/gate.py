"""The live reliability gate for Direct Assessment (docs/methods.md §12.1).

After each HIT a worker finishes, their reliability test runs over all their bad-reference pairs so far, in
the campaign or, with `reliability_scope` study, in every Direct Assessment campaign of its study. Only that
worker's judgments are loaded (one query per campaign, on the (campaign, annotator) index): a bad reference
pairs with the worker's own judgment of the same output in the same HIT, so nobody else's rows are needed.

The rule (campaign options):

- `gate_rule` "test" (the default): stop the worker when, after at least `gate_min_pairs` pairs (5), the
  campaign's test (`qc_test`) does not pass them at its threshold (`qc_threshold`, by `threshold_rule`): p ≥
  threshold under "lt", p > threshold under "le"; no p-value (e.g. every difference the same) does not pass.
- `gate_rule` "missed": stop the worker when, after at least `gate_min_pairs` pairs, the share of bad
  references they did not score below their originals is at least `gate_max_missed` (0.5).
"""
from __future__ import annotations

import numpy as np

from annotation.models import Campaign

from ... import reliability_tests
from ...presets import conventions_of, passes
from ..base import GateVerdict, scope_campaigns
from .analysis import BAD_REF, match_pairs, pooled_reliability
from .presets import FAMILY
from .storage import load_judgments

DEFAULT_MIN_PAIRS = 5
DEFAULT_MAX_MISSED = 0.5


def missed(data) -> tuple[int, int]:
    """(bad references not scored below their originals, bad-reference pairs) in one worker's rows."""
    data = data.in_id_order().keyed_by_unit()
    ((bad, original),) = match_pairs(data, (BAD_REF,))
    return int(np.sum(data.score[bad] >= data.score[original])), int(bad.size)


def gate(campaign: Campaign, annotator) -> GateVerdict | None:
    options = campaign.options or {}
    conventions = conventions_of(campaign, FAMILY)
    rule = options.get("gate_rule") or "test"
    minimum = int(options.get("gate_min_pairs") or DEFAULT_MIN_PAIRS)
    scope = scope_campaigns(campaign, conventions.scope)
    data = [d for d in (load_judgments(c, annotator.pk) for c in scope) if len(d)]
    if not data:
        return None
    where = "in the study" if len(data) > 1 or conventions.scope == "study" and campaign.study_id else \
        "in this campaign"
    misses = [missed(d) for d in data]
    n_missed, n_pairs = sum(m for m, _ in misses), sum(n for _, n in misses)
    share = n_missed / n_pairs if n_pairs else None
    if rule == "missed":
        limit = float(options.get("gate_max_missed") or DEFAULT_MAX_MISSED)
        if n_pairs >= minimum and share >= limit:
            return GateVerdict("missed", f"missed {n_missed} of {n_pairs} bad references {where} (did not score "
                               f"them below their originals): {share:.0%} ≥ {limit:.0%}", pairs=n_pairs,
                               missed_share=share)
        return None
    test = conventions.test
    threshold = reliability_tests.threshold_in_use(test, conventions.threshold)
    result = pooled_reliability(data, test, threshold)
    if result.p.size == 0:
        return None
    p, pairs = float(result.p[0]), int(result.pairs[0])
    if pairs < minimum or bool(passes(p, threshold, conventions.threshold_rule)):
        return None
    sign = "≥" if conventions.threshold_rule == "lt" else ">"
    shown = f"p = {p:.3g} {sign} {threshold:g}" if np.isfinite(p) else "no p-value (the test cannot pass them)"
    return GateVerdict("test", f"failed the {test} reliability test on {pairs} bad-reference pairs {where}: "
                       f"{shown}", test=test, p_value=p if np.isfinite(p) else None, pairs=pairs, missed_share=share)
