"""Adaptive allocation for Direct Assessment (docs/methods.md §12.2): what a look reads of a campaign.

A look counts what the results count (§4, §5): the z-scores (each worker standardised over all their scored
items) of system-output items, first judgments and exact repeats alike, with their segments (the core averages
them per translation, as the ranking's significance test does), by the workers the campaign's reliability test
passes (its conventions: test, threshold, threshold rule; with `reliability_scope` study the
verdicts pooled over the study's DA campaigns). Bad references and reference translations never count. The
analysis is `analysis.analyse`, the very code of the results, run on the campaign's judgments as they stand.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotation.models import Assignment, Campaign

from ...presets import conventions_of
from ...reliability_tests import threshold_in_use
from ..base import scope_campaigns
from .analysis import REPEAT, SYSTEM, analyse, pooled_reliability
from .presets import FAMILY
from .storage import load_judgments


@dataclass(frozen=True)
class LookData:
    """The judgments a look tests: z-scores, the system (index into `names`) and the segment (a code from 0) of
    each; the core tests per-translation means, as the final ranking does (§5.3)."""

    scores: np.ndarray
    systems: np.ndarray
    segments: np.ndarray
    #: The batch of each judgment's HIT: the core compares systems within batches (van Elteren), since each
    #: batch's mix of systems shifts the workers' z-scores (docs/methods.md §12.2).
    strata: np.ndarray
    names: list[str]
    workers: int
    reliable_workers: int


class DirectAssessmentAdaptive:
    """The family's adapter for evaluation/services/adaptive.py."""

    def load(self, campaign: Campaign) -> LookData:
        data = load_judgments(campaign).in_id_order()  # analyse() sorts too: its z then lines up with `data`
        conventions = conventions_of(campaign, FAMILY)
        pooled = None
        if conventions.scope == "study" and campaign.study_id is not None:
            others = [load_judgments(c) for c in scope_campaigns(campaign, "study") if c.pk != campaign.pk]
            pooled = pooled_reliability([d for d in [data, *others] if len(d)], conventions.test,
                                        threshold_in_use(conventions.test, conventions.threshold))
        if len(data) == 0:
            empty = np.empty(0, dtype=np.int64)
            return LookData(np.empty(0), empty, empty, empty, data.system_names, 0, 0)
        analysis = analyse(data, test=conventions.test, threshold=conventions.threshold,
                           threshold_rule=conventions.threshold_rule, cluster_rule=conventions.cluster_rule,
                           pooled=pooled)
        worker = np.searchsorted(analysis.annotator_ids, data.annotator_id)
        counted = (np.isin(data.item_type, [SYSTEM, REPEAT]) & (data.system >= 0) & analysis.reliable[worker]
                   & np.isfinite(analysis.z.z))
        _, segments = np.unique(data.segment[counted], return_inverse=True)
        batches = np.array(Assignment.objects.filter(campaign=campaign).order_by("pk")
                           .values_list("pk", "hit__batch"), dtype=object).reshape(-1, 2)
        assignment_ids = batches[:, 0].astype(np.int64)
        batch_of = np.array([b or 0 for b in batches[:, 1]], dtype=np.int64)
        strata = batch_of[np.searchsorted(assignment_ids, data.assignment[counted])]
        return LookData(scores=analysis.z.z[counted], systems=data.system[counted],
                        segments=segments.astype(np.int64).reshape(-1), strata=strata, names=data.system_names,
                        workers=int(analysis.annotator_ids.size), reliable_workers=int(analysis.reliable.sum()))


ADAPTIVE = DirectAssessmentAdaptive()
