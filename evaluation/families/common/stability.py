"""Ranking stability's requests, stored figures, answers and page section, for any family that offers it
(docs/methods.md §12.4).

A family offers ranking stability through `Family.stability_filters` and `Family.stability_data`; the bootstrap
runs as Celery subtasks (evaluation/stability_tasks.py) and its figures are stored as two `ResultTable`s per
worker filter and score: "stability" (one row per system: rank probabilities, mean rank, 95 % interval; also
the CSV download) and "stability-summary" (one row: status, the run's settings and the ranking's figures).
Both go with the results they were computed from: a new results run replaces every stored table, and a new
bootstrap is queued (stability_tasks.after_results).
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign

from ...charts.stability import rank_probability_chart
from ...models import CampaignResults, ResultTable
from ...presenters.formatting import fixed
from ...services.results_read import freshness
from ...services.storing import jsonable
from ...stats import stability as core
from .. import family_of
from ..base import BadQuery, Family

TABLE = "stability"
SUMMARY = "stability-summary"
DEFAULT_RESAMPLES = 1000
MIN_RESAMPLES, MAX_RESAMPLES = 100, 10_000
DEFAULT_SEED = 0
MAX_SEED = 2 ** 63 - 1


@dataclass(frozen=True)
class StabilityRequest:
    """Which ranking (worker filter, score) and how: resamples and seed (None: whatever is stored, when read)."""

    workers: str
    score: str
    resamples: int | None
    seed: int | None

    @property
    def variant(self) -> str:
        """The stored tables' variant: the worker filter, with "-raw" for raw scores."""
        return self.workers if self.score == "z" else f"{self.workers}-{self.score}"


def _integer(params: Mapping[str, str], name: str, low: int, high: int, default: int | None) -> int | None:
    value = params.get(name)
    if value in (None, ""):
        return default
    try:
        number = int(str(value).strip())
    except ValueError:
        raise BadQuery(f"{name} must be a whole number from {low:,} to {high:,}") from None
    if not low <= number <= high:
        raise BadQuery(f"{name} must be a whole number from {low:,} to {high:,}")
    return number


def parse(family: Family, params: Mapping[str, str], *, reading: bool = False) -> list[StabilityRequest]:
    """The requests `params` ask for: `workers` (one of the family's filters; to start: default every filter,
    to read: the first), `score` (z or raw, default z; only
    z where the family's `stability_scores` say so), `resamples` (100–10,000; default 1,000 to start, the
    stored run's to read) and `seed` (a non-negative integer; default 0 to start). Bad values are a BadQuery."""
    filters = family.stability_filters
    if not filters:
        raise BadQuery(f"a {family.label or 'campaign without statistics'} campaign has no ranking stability")
    workers = params.get("workers") or ""
    if workers and workers not in filters:
        raise BadQuery(f"workers must be {' or '.join(filters)}")
    score = params.get("score") or "z"
    scores = family.stability_scores
    if score not in scores:
        raise BadQuery(f"score must be {' or '.join(scores)}" if len(scores) > 1 else "this campaign's ranking "
                       "has one score: leave score out")
    resamples = _integer(params, "resamples", MIN_RESAMPLES, MAX_RESAMPLES, None if reading else DEFAULT_RESAMPLES)
    seed = _integer(params, "seed", 0, MAX_SEED, None if reading else DEFAULT_SEED)
    chosen = [workers] if workers else ([filters[0]] if reading else list(filters))
    return [StabilityRequest(w, score, resamples, seed) for w in chosen]


# Runs ---------------------------------------------------------------------------------------------------------

def new_run(request: StabilityRequest, header: CampaignResults) -> dict:
    """What a run's tasks carry: the request, and the results run and judgments it is computed from."""
    return {"run_id": uuid.uuid4().hex, "workers": request.workers, "score": request.score,
            "resamples": request.resamples, "seed": request.seed, "variant": request.variant,
            "last_id": header.last_judgment_id, "results_run": header.runs,
            "results_at": header.computed_at.isoformat() if header.computed_at else None,
            "started_at": timezone.now().isoformat()}


def _summary(campaign: Campaign, variant: str) -> dict | None:
    table = ResultTable.objects.filter(campaign=campaign, name=SUMMARY, variant=variant).only("rows").first()
    return table.rows[0] if table and table.rows else None


def _write_summary(campaign: Campaign, variant: str, row: dict) -> None:
    ResultTable.objects.update_or_create(campaign=campaign, name=SUMMARY, variant=variant,
                                         defaults={"columns": list(row), "rows": [jsonable(row)]})


def is_current(campaign_id: int, run: dict) -> bool:
    """Whether the results the run started from are still the stored ones."""
    return CampaignResults.objects.filter(campaign_id=campaign_id, runs=run["results_run"],
                                          last_judgment_id=run["last_id"]).exists()


def mark_running(campaign: Campaign, run: dict) -> None:
    """Note the run as the variant's current one; the figures of the previous run stay until it is done."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk", flat=True).first()
        previous = _summary(campaign, run["variant"]) or {}
        _write_summary(campaign, run["variant"], {**previous, "status": "running", "run": run, "error": None})


def mark_failed(campaign_id: int, run: dict, error: str) -> bool:
    """Note the run as failed, unless a newer run has taken its place."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(pk=campaign_id).first()
        previous = _summary(campaign, run["variant"]) if campaign else None
        if previous is None or (previous.get("run") or {}).get("run_id") != run["run_id"]:
            return False
        _write_summary(campaign, run["variant"], {**previous, "status": "failed", "error": error[:500],
                                                  "finished_at": timezone.now().isoformat()})
    return True


def store(campaign_id: int, run: dict, counts: core.StabilityCounts, seconds: float) -> bool:
    """Store a finished run's figures, under the campaign's row lock; False (nothing stored) when newer results
    or a newer run of the same variant have superseded it."""
    if not counts.systems:
        return _store_empty(campaign_id, run, seconds)
    result = core.summarise(counts)
    rows = rank_rows(result)
    order = [int(i) for i in result.observed_rank.argsort()]
    summary = {
        "status": "done", "run": run, "error": None, "finished_at": timezone.now().isoformat(),
        "seconds": round(seconds, 3), "workers": run["workers"], "score": run["score"],
        "resamples": result.resamples, "seed": run["seed"], "last_judgment_id": run["last_id"],
        "results_run": run["results_run"], "test": "two-sided z test on weighted means", "alpha": core.ALPHA,
        "stable_ranking_probability": result.stable_ranking_probability, "same_order": result.same_order,
        "same_relations": result.same_pattern, "distinct_patterns": result.distinct_patterns,
        "observed_order": [result.systems[i] for i in order],
        "better": [[result.better[i][j] for j in order] for i in order],
    }
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(pk=campaign_id).first()
        if campaign is None or not is_current(campaign_id, run):
            return False
        current = _summary(campaign, run["variant"]) or {}
        if (current.get("run") or {}).get("run_id") != run["run_id"]:
            return False
        ResultTable.objects.update_or_create(campaign=campaign, name=TABLE, variant=run["variant"], defaults={
            "columns": list(dict.fromkeys(c for row in rows for c in row)), "rows": jsonable(rows)})
        _write_summary(campaign, run["variant"], summary)
    return True


def empty_detail(workers: str) -> str:
    """Why a run has nothing to rank: its worker filter keeps no judgment of any system."""
    why = " (no worker has passed the reliability test yet)" if workers == "reliable" else ""
    return (f"workers={workers}: no system has a judgment counted under this filter{why}, so there is no ranking "
            "to resample")


def _store_empty(campaign_id: int, run: dict, seconds: float) -> bool:
    """A finished run with no system to rank (a pilot whose workers have not passed yet): status "empty" with the
    reason and no rows, in place of figures; False when superseded (as `store`)."""
    summary = {"status": "empty", "run": run, "error": None, "detail": empty_detail(run["workers"]),
               "finished_at": timezone.now().isoformat(), "seconds": round(seconds, 3), "workers": run["workers"],
               "score": run["score"], "resamples": run["resamples"], "seed": run["seed"],
               "last_judgment_id": run["last_id"], "results_run": run["results_run"]}
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(pk=campaign_id).first()
        if campaign is None or not is_current(campaign_id, run):
            return False
        if ((_summary(campaign, run["variant"]) or {}).get("run") or {}).get("run_id") != run["run_id"]:
            return False
        ResultTable.objects.filter(campaign=campaign, name=TABLE, variant=run["variant"]).delete()
        _write_summary(campaign, run["variant"], summary)
    return True


def rank_rows(result: core.StabilityResult) -> list[dict]:
    """One row per system in observed rank order: its observed rank and score, mean rank, 95 % rank interval and
    the probability of each rank (p_rank_1 … p_rank_S)."""
    rows = []
    for code in result.observed_rank.argsort():
        row = {"system": result.systems[code], "observed_rank": int(result.observed_rank[code]),
               "observed_score": float(result.observed_mean[code]), "mean_rank": float(result.mean_rank[code]),
               "rank_low": int(result.rank_low[code]), "rank_high": int(result.rank_high[code])}
        row.update({f"p_rank_{k + 1}": float(p) for k, p in enumerate(result.rank_probability[code])})
        rows.append(row)
    return rows


# Reading ------------------------------------------------------------------------------------------------------

def stored(campaign: Campaign, request: StabilityRequest) -> tuple[dict | None, list[dict]]:
    """The variant's summary row (None when never run) and its system rows (empty until a run is done)."""
    return stored_variants(campaign, [request.variant])[request.variant]


def stored_variants(campaign: Campaign, variants: list[str]) -> dict[str, tuple[dict | None, list[dict]]]:
    """`stored` for several variants in one query."""
    tables = {(t.name, t.variant): t for t in ResultTable.objects.filter(
        campaign=campaign, name__in=(TABLE, SUMMARY), variant__in=variants)}
    out = {}
    for variant in variants:
        summary, table = tables.get((SUMMARY, variant)), tables.get((TABLE, variant))
        out[variant] = (summary.rows[0] if summary and summary.rows else None,
                        [{c: row.get(c) for c in table.columns} for row in table.rows] if table else [])
    return out


def answer(campaign: Campaign, family: Family, params: Mapping[str, str]) -> dict:
    """The body of GET `stability/`: the results' freshness, then the stored figures of one worker filter and
    score with the run's status ("none", "running", "done", "failed") and whether they come from older results
    than the stored ones (`older_results`). A `resamples` or `seed` that differs from the stored run's answers
    status "none" (POST to compute that)."""
    (request,) = parse(family, params, reading=True)
    summary, rows = stored(campaign, request)
    header = CampaignResults.objects.filter(campaign=campaign).only(
        "computed_at", "judgments", "last_judgment_id", "seconds", "runs").first()
    body = {**freshness(campaign, header).as_api(), "workers": request.workers, "score": request.score,
            "status": "none", "older_results": False}
    if summary is None:
        return {**body, "detail": "no ranking stability computed for these results; POST to compute it",
                "results": []}
    run = summary.get("run") or {}
    body["status"] = summary.get("status", "none")
    if summary.get("status") == "failed":
        body["error"] = summary.get("error")
    if summary.get("status") == "empty":  # nothing to rank under this filter: the reason, no figures
        return {**body, "detail": summary.get("detail"), "results": []}
    if summary.get("status") == "running":
        body["running"] = {k: run.get(k) for k in ("resamples", "seed", "started_at")}
    if "stable_ranking_probability" not in summary:  # never finished: only the status
        return {**body, "results": []}
    if (request.resamples is not None and request.resamples != summary["resamples"]) or (
            request.seed is not None and request.seed != summary["seed"]):
        return {**body, "status": "none", "detail": f"the stored run has {summary['resamples']:,} resamples with seed "
                f"{summary['seed']}; POST with these settings to compute it", "results": []}
    figures = {key: summary.get(key) for key in (
        "resamples", "seed", "test", "alpha", "stable_ranking_probability", "same_order", "same_relations",
        "distinct_patterns", "finished_at", "seconds", "last_judgment_id")}
    body["older_results"] = header is None or header.runs != summary.get("results_run")
    return {**body, **figures, "separation": {"systems": summary.get("observed_order", []),
                                              "better": summary.get("better", [])},
            "results": [_api_row(row) for row in rows]}


def _api_row(row: dict) -> dict:
    probabilities = [row[k] for k in row if k.startswith("p_rank_")]
    interval = [row["rank_low"], row["rank_high"]] if row["rank_low"] else []  # 0: a system without rank counts
    return {"system": row["system"], "observed_rank": row["observed_rank"], "observed_score": row["observed_score"],
            "mean_rank": row["mean_rank"], "rank_interval": interval,
            "rank_probabilities": probabilities}


def table_rows(campaign: Campaign, params: Mapping[str, str]) -> tuple[list[str], list[dict]]:
    """The CSV download: every stored variant's rows, with columns workers and score first."""
    tables = ResultTable.objects.filter(campaign=campaign, name=TABLE).order_by("variant")
    rows, columns = [], ["workers", "score", "system", "observed_rank", "observed_score", "mean_rank", "rank_low",
                         "rank_high"]  # the header even before a run is done
    for table in tables:
        workers, _, score = table.variant.partition("-")
        for row in table.rows:
            rows.append({"workers": workers, "score": score or "z", **row})
        columns += [c for c in table.columns if c not in columns]
    return columns, rows


FILTER_TITLES = {"reliable": "Quality-controlled: reliable workers only", "all": "Unfiltered: all workers"}


# Page ------------------------------------------------------------------------------------------------------

def page_section(campaign, header) -> list[dict]:
    """Per worker filter (z-scores), what the page's "Ranking stability" section shows: the run's status, the
    ranking's figures, the chart and its numbers."""
    filters = family_of(campaign).stability_filters
    tables = stored_variants(campaign, [StabilityRequest(w, "z", None, None).variant
                                                for w in filters])
    out = []
    for workers in filters:
        summary, rows = tables[workers]
        summary = summary or {}
        done = "stable_ranking_probability" in summary
        chart_rows = [{"label": f"{r['observed_rank']}. {r['system']}", "system": r["system"],
                       "probabilities": [r[f"p_rank_{k + 1}"] for k in range(len(rows))],
                       "mean_rank": r["mean_rank"], "interval": (r["rank_low"], r["rank_high"]),
                       "score_text": fixed(r["observed_score"]), "mean_text": fixed(r["mean_rank"], 2)}
                      for r in rows]
        for row in chart_rows:
            row["cells"] = [_percent(p) for p in row["probabilities"]]
        srp = summary.get("stable_ranking_probability")
        out.append({
            "workers": workers, "title": FILTER_TITLES.get(workers, workers), "done": done,
            "status": summary.get("status", "none"), "error": summary.get("error"), "detail": summary.get("detail"),
            "running": _running(summary),
            "stale": done and (header is None or summary.get("results_run") != header.runs),
            "srp": _percent(srp), "same_order": _percent(summary.get("same_order")),
            "same_relations": _percent(summary.get("same_relations")), "resamples": summary.get("resamples"),
            "seed": summary.get("seed"), "distinct_patterns": summary.get("distinct_patterns"),
            "svg": rank_probability_chart(chart_rows, srp=srp, title="Rank probabilities, "
                                          + FILTER_TITLES.get(workers, workers)) if done else None,
            "ranks": list(range(1, len(rows) + 1)), "rows": chart_rows,
        })
    return out


def _running(summary: dict) -> dict | None:
    """The running run's resamples and start time (UTC, to the minute), or None."""
    run = summary.get("run") or {}
    if summary.get("status") != "running":
        return None
    started = str(run.get("started_at") or "")
    return {"resamples": run.get("resamples"), "since": started[:16].replace("T", " ")}


def _percent(value) -> str:
    """A probability in per cent: one decimal strictly between 0 and 1, none at the ends."""
    if value is None or not np.isfinite(value):
        return "–"
    return f"{100 * value:.1f} %" if 0 < value < 1 else f"{100 * value:.0f} %"
