"""Ranking stability for Direct Assessment (docs/methods.md §12.4): the judgments the DA ranking counts, as the
bootstrap's input, the `stability/` endpoint and the results page's section.

The rows are those of the stored ranking (docs/methods.md §5.2): system-output judgments and exact repeats (and
reference translations under `reference_as_system`, as the "human reference" pseudo-system), segment items only
for document-level DA, of every worker or of the reliable ones by the stored verdicts; the scores are the
z-scores fitted on all of each worker's judgments (or the raw scores). Judgments newer than the stored results
are left out, so every subtask of a run reads the same rows.
"""
from __future__ import annotations

from dataclasses import fields

import numpy as np

from ... import stats
from ...charts.stability import rank_probability_chart
from ...models import WorkerResult
from ...presenters.formatting import fixed
from ...services import stability as service
from ...stats import stability as core
from .analysis import DOCUMENT, HUMAN_REFERENCE, REFERENCE, REPEAT, SYSTEM, DAJudgments
from .storage import load_judgments

FILTER_TITLES = {"reliable": "Quality-controlled: reliable workers only", "all": "Unfiltered: all workers"}


def _up_to(data: DAJudgments, last_judgment_id: int) -> DAJudgments:
    keep = data.judgment_id <= last_judgment_id
    if keep.all():
        return data
    rows = {f.name: getattr(data, f.name)[keep] for f in fields(data)
            if isinstance(getattr(data, f.name), np.ndarray)}
    return DAJudgments(**rows, system_names=data.system_names)


def stability_data(campaign, workers: str, score: str, last_judgment_id: int) -> core.StabilityData:
    """The counted judgments of the stored ranking under `workers` ("reliable" or "all") and `score` ("z" or
    "raw"), up to `last_judgment_id`, ready for the bootstrap."""
    data = _up_to(load_judgments(campaign), last_judgment_id).in_id_order()
    annotator_ids, worker = np.unique(data.annotator_id, return_inverse=True)
    values = data.score
    if score == "z":
        values = stats.standardise(worker, data.score, annotator_ids.size).z
    reference_as_system = bool((campaign.options or {}).get("reference_as_system", False))
    counted = np.isin(data.item_type, [SYSTEM, REPEAT, REFERENCE] if reference_as_system else [SYSTEM, REPEAT])
    if data.unit is not None:
        counted &= data.unit != DOCUMENT
    if workers == "reliable":
        verdicts = dict(WorkerResult.objects.filter(campaign=campaign).values_list("annotator_id", "reliable"))
        reliable = np.array([bool(verdicts.get(int(a), False)) for a in annotator_ids], dtype=bool)
        counted &= reliable[worker]
    names = list(data.system_names)
    system = data.system
    if reference_as_system:
        system = np.where(data.item_type == REFERENCE, len(names), system)
        names.append(HUMAN_REFERENCE)
    rows = counted & np.isfinite(values)
    return core.prepare(worker[rows], data.segment[rows], system[rows], values[rows], names)


def stability(campaign, params):
    """The body of GET `stability/` (evaluation/services/stability.py answers every family alike)."""
    from ...families import family_of

    return service.answer(campaign, family_of(campaign), params)


# Page ------------------------------------------------------------------------------------------------------

def page_section(campaign, header) -> list[dict]:
    """Per worker filter (z-scores), what the page's "Ranking stability" section shows: the run's status, the
    ranking's figures, the chart and its numbers."""
    from ...families import family_of

    filters = family_of(campaign).stability_filters
    tables = service.stored_variants(campaign, [service.StabilityRequest(w, "z", None, None).variant
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
