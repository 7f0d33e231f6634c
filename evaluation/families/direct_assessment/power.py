"""Power and cost from a pilot for Direct Assessment (docs/methods.md §12.3): the judgments, HITs and money a
campaign needs to separate two systems δ apart, simulated from the campaign's judgments so far.

The pilot is the campaign's judgments covered by its stored results (id ≤ the results' last judgment), so the
scores and the workers' reliability verdicts belong together: system outputs and repeats (what the ranking
counts, §5.2) by workers whose test passed, on the raw or the z scale. The plan keeps the campaign's design:
its redundancy (judges per translation), HIT size, pay per HIT and number of systems. The statistics are in
`evaluation/stats/power.py`; this module reads the campaign, checks the query and prices the answer.

Answers are cached per campaign, results run, design (redundancy, HIT size, pay) and query: the same ones give
the same answer, the simulation being seeded.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
from django.core.cache import cache

from annotation.building.hit_layout import HitPlanError
from annotation.building.qc_hits import distinct_outputs_per_hit
from annotation.models import Campaign

from ... import stats
from ...models import CampaignResults, WorkerResult
from ...services.results_read import freshness
from ...stats import power as core
from ..base import BadQuery
from .analysis import DOCUMENT, REPEAT, SYSTEM
from .storage import load_judgments

SCALES = ("raw", "z")
#: The largest δ that makes sense: raw scores are 0–100; z-scores rarely span more than ±3.
MAX_DELTA = {"raw": 100.0, "z": 5.0}
DEFAULTS = {"power": 0.8, "alpha": 0.05, "scale": "raw", "repetitions": 200}
REPETITIONS = (50, 2000)
#: The largest number of counted translations per system the search tries.
MAX_TRANSLATIONS = 20_000
CACHE_SECONDS = 24 * 3600


def _number(params: Mapping[str, str], name: str, default=None) -> float:
    raw = params.get(name)
    if raw in (None, ""):
        if default is None:
            raise BadQuery(f"give {name}=<number>")
        return float(default)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise BadQuery(f"{name} must be a number, not {raw!r}") from None
    if not math.isfinite(value):
        raise BadQuery(f"{name} must be a finite number")
    return value


def parse(params: Mapping[str, str]) -> dict:
    """The query checked: δ > 0 (≤ 100 raw points, ≤ 5 in z), power in (0.5, 0.99], α in (0, 0.5),
    scale raw or z, repetitions an integer in [50, 2000]. Raises BadQuery with what is wrong."""
    scale = params.get("scale") or DEFAULTS["scale"]
    if scale not in SCALES:
        raise BadQuery("scale must be raw or z")
    delta = _number(params, "delta")
    if not 0 < delta <= MAX_DELTA[scale]:
        raise BadQuery(f"delta must be above 0 and at most {MAX_DELTA[scale]:g} on the {scale} scale")
    target = _number(params, "power", DEFAULTS["power"])
    if not 0.5 < target <= 0.99:
        raise BadQuery("power must be above 0.5 and at most 0.99")
    alpha = _number(params, "alpha", DEFAULTS["alpha"])
    if not 0 < alpha < 0.5:
        raise BadQuery("alpha must be above 0 and below 0.5")
    repetitions = _number(params, "repetitions", DEFAULTS["repetitions"])
    if repetitions != int(repetitions) or not REPETITIONS[0] <= repetitions <= REPETITIONS[1]:
        raise BadQuery(f"repetitions must be a whole number from {REPETITIONS[0]} to {REPETITIONS[1]}")
    return {"delta": delta, "power": target, "alpha": alpha, "scale": scale, "repetitions": int(repetitions)}


def _pilot(campaign: Campaign, header: CampaignResults, scale: str):
    """The counted judgments' (system, segment, score) and the pilot's figures."""
    verdicts = dict(WorkerResult.objects.filter(campaign=campaign).values_list("annotator_id", "reliable"))
    data = load_judgments(campaign).in_id_order()
    covered = data.judgment_id <= header.last_judgment_id
    annotator_ids, worker = np.unique(data.annotator_id[covered], return_inverse=True)
    reliable = np.array([bool(verdicts.get(int(a), False)) for a in annotator_ids], dtype=bool)
    rows = np.flatnonzero(covered)
    item_type, system = data.item_type[rows], data.system[rows]
    segment_unit = np.ones(rows.size, bool) if data.unit is None else data.unit[rows] != DOCUMENT
    outputs = segment_unit & (system >= 0)
    first = outputs & (item_type == SYSTEM)
    passed = reliable[worker]
    score = data.score[rows]
    if scale == "z":
        score = stats.standardise(worker, score, annotator_ids.size).z
    counted = outputs & np.isin(item_type, [SYSTEM, REPEAT]) & passed & np.isfinite(score)
    judged = int(first.sum())
    figures = {
        "judgments": judged, "counted_judgments": int(counted.sum()), "workers": int(annotator_ids.size),
        "workers_passed": int(reliable.sum()),
        "worker_pass_rate": float(reliable.mean()) if reliable.size else None,
        "pass_rate": float(np.mean(passed[first])) if judged else None,
    }
    return system[counted], data.segment[rows][counted], score[counted], figures


def _money(assignments: int, pay: Decimal) -> str:
    return str((pay * assignments).quantize(Decimal("0.01")))


def _plan(n: int, systems: int, judges: int, pass_rate: float, per_hit: int, hit_size: int, pay: Decimal) -> dict:
    size = core.campaign_size(n, systems, judges, pass_rate, per_hit, hit_size)
    return {"translations_per_system": n, "segments_per_system": size.segments, "judgments": size.judgments,
            "judgments_per_system": size.judgments // systems, "counted_judgments": round(size.counted),
            "hits": size.hits, "assignments": size.assignments, "items": size.items,
            "money": _money(size.assignments, pay)}


def compute(campaign: Campaign, query: dict) -> dict:
    """The answer without freshness (what is cached)."""
    header = CampaignResults.objects.filter(campaign=campaign).only("last_judgment_id", "runs").first()
    if header is None:
        raise BadQuery("power needs the campaign's results (the workers' reliability verdicts): compute them first")
    system, segment, score, pilot_figures = _pilot(campaign, header, query["scale"])
    if not pilot_figures["pass_rate"]:
        raise BadQuery("power needs judgments by workers who passed quality control; this campaign has none yet")
    try:
        pilot = core.pilot_variance(system, segment, score)
    except ValueError as exc:
        raise BadQuery(f"too little data for a power estimate: {exc}") from None
    systems = campaign.systems.count()
    judges = int(campaign.redundancy)
    try:
        per_hit = distinct_outputs_per_hit(int(campaign.hit_size))
    except HitPlanError as exc:
        raise BadQuery(str(exc)) from None
    pay = campaign.payment_per_hit or Decimal(0)
    pass_rate = pilot_figures["pass_rate"]
    search = core.required_translations(pilot, query["delta"], query["power"], query["alpha"], query["repetitions"],
                                        judges, pass_rate, n_max=MAX_TRANSLATIONS)

    def plan(n: int) -> dict:
        return _plan(n, systems, judges, pass_rate, per_hit, int(campaign.hit_size), pay)

    return {
        "query": query,
        "pilot": {**pilot_figures, "translations": pilot.translations, "segments": pilot.segments,
                  "systems": pilot.systems, "sd": pilot.sd_judgment, "sd_segment": pilot.sd_segment,
                  "sd_translation": pilot.sd_translation, "sd_noise": pilot.sd_noise},
        "design": {"systems": systems, "redundancy": judges, "hit_size": int(campaign.hit_size),
                   "outputs_per_hit": per_hit, "payment_per_hit": str(pay)},
        "reached": search.n is not None,
        "power_at_n": search.power,
        "plan": plan(search.n) if search.n is not None else None,
        "max_translations": MAX_TRANSLATIONS,
        "curve": [{"power": p, "fitted": (float(search.fitted(n)) if math.isfinite(search.slope) else None),
                   **plan(n)} for n, p in search.curve],
    }


def power(campaign: Campaign, params: Mapping[str, str]) -> dict:
    """The body of `GET /api/campaigns/<slug>/power/` (docs/api.md): the query echoed, the pilot's figures, the
    plan (counted translations per system n, segments, judgments, HITs, assignments, money) and the power
    curve, each point with its plan. Raises BadQuery for a bad query or a campaign with too little data."""
    query = parse(params)
    fresh = freshness(campaign)
    stamp = fresh.computed_at.timestamp() if fresh.computed_at else 0
    key = (f"da-power:{campaign.pk}:{fresh.runs}:{stamp}:{campaign.redundancy}:{campaign.hit_size}:"
           f"{campaign.payment_per_hit}:" + ":".join(str(query[k]) for k in ("scale", "delta", "power", "alpha",
                                                                            "repetitions")))
    try:
        answer = cache.get(key)
    except Exception:  # the cache cannot be reached (a hung or stopped Redis): answer without it
        answer = None
    if answer is None:
        answer = compute(campaign, query)
        try:
            cache.set(key, answer, CACHE_SECONDS)
        except Exception:
            pass  # kept for next time only when the cache answers
    return {**fresh.as_api(), **answer}
