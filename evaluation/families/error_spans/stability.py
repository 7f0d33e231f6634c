"""Ranking stability for error-span campaigns (docs/methods.md §12.4): the observations the ESA/MQM ranking
counts, as the bootstrap's input over workers and segments; the runs, the API answer, the stored tables and the
page's section are those every family shares (families/common/stability.py).

The rows are those the stored ranking counts (docs/methods.md §11): the preset's `counted_rows` (tutorials always
out; under WMT24 perturbed copies, unfinished HITs and a judge's earlier ratings of an item out too; under WMT25
every other rating counts, perturbed copies as ratings of their system), of every worker or of the reliable ones
by the stored perturbation-test verdicts, up to the judgment id the stored results cover. The score is the
ranking's: the ESA score (0–100), or minus the MQM penalty under the campaign's weights. Systems the preset leaves
unranked (fewer than `min_items` items among these rows) are left out. The core scores a system by the mean of
its items' means, items being (system, segment) as in the ranking; this is the stored score under WMT24 with one
domain (WMT24 macro-averages over domains) and under WMT25 when every item has as many ratings.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from annotation.models import Document, System

from ...models import WorkerResult
from ...presets import conventions_of
from ...stats import stability as core
from ...stats.error_spans import GOOGLE, MQM_PRESETS
from ..base import BadQuery
from . import ai_assist
from .analysis import counted_rows
from .loading import add_counts, load_observations, span_counts
from .presets import FAMILY
from .storage import rules_of, score_kind


class NothingRanked(BadQuery):
    """No system has enough counted items for the preset to rank it (kept for callers that name it; a pilot's
    stability run now ends with status "empty" instead)."""


def stability_data(campaign, workers: str, score: str, last_judgment_id: int) -> core.StabilityData:
    """The observations the stored ranking counts, under `workers` ("all" or "reliable"), up to
    `last_judgment_id`, ready for the bootstrap; `score` is the shared default ("z"), read as the ranking's own
    score (ESA, or minus MQM)."""
    systems = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("pk", "name"))
    contrastive = campaign.protocol_spec.contrastive
    obs = load_observations(campaign, last_judgment_id, [pk for pk, _ in systems], contrastive)
    if score_kind(campaign) == "mqm":
        weights = MQM_PRESETS.get((campaign.options or {}).get("mqm_weights", "google"), GOOGLE)
        add_counts(obs, span_counts(campaign, last_judgment_id, obs), weights)
        value = -obs.penalty
    else:
        value = obs.score
    rules = rules_of(campaign, conventions_of(campaign, FAMILY).preset)
    counted = counted_rows(replace(obs, score=value), rules)
    if workers == "reliable":
        verdicts = dict(WorkerResult.objects.filter(campaign=campaign).values_list("annotator_id", "reliable"))
        annotators, worker = np.unique(obs.annotator, return_inverse=True)
        reliable = np.array([bool(verdicts.get(int(a), False)) for a in annotators], dtype=bool)
        counted &= reliable[worker.ravel()]
    rows = np.flatnonzero(counted)
    n_systems = len(systems)
    items = np.unique(obs.system[rows] * (int(obs.segment.max(initial=0)) + 1) + obs.segment[rows])
    per_system = np.bincount(items // (int(obs.segment.max(initial=0)) + 1), minlength=n_systems)
    ranked = per_system >= max(rules.min_items, 1)
    # A system with fewer counted items than the preset needs is left out; when none is left (a pilot), the data
    # are empty and the run ends with status "empty" and its reason, as DA's do: too little data is no failure.
    rows = rows[ranked[obs.system[rows]]]
    # ESA^AI: the bootstrap scores a system with the post-stratified Hájek estimator, each resample re-weighting
    # its strata (the unsent AI-clean outputs of the drawn segments counted in N_h), as the stored ranking does
    documents = list(Document.objects.filter(campaign=campaign).values_list("pk", "domain"))
    domain_names = sorted({domain for _, domain in documents})
    counted_outputs = ai_assist.population(campaign, [pk for pk, _ in systems],
                                           {pk: domain_names.index(domain) for pk, domain in documents})
    return core.prepare(obs.annotator[rows], obs.segment[rows], obs.system[rows], value[rows],
                        [name for _, name in systems],
                        population=None if counted_outputs is None else counted_outputs.as_rows(), macro=rules.macro)
